"""Queries over the code index: ranked chunk search and symbol lookup."""

from __future__ import annotations

import re

from ..core import domain
from ..core.errors import InvalidInput, InvalidQuery
from ..storage.code import search as tables
from ..storage.protocol import Connection
from .dense import DenseCodeRanker, fuse
from .docs import DOC_LANGUAGES
from .languages import EXTENSIONS, TEXT_LANGUAGES
from .models import CodeHit, SymbolHit
from .terms import fts_query

__all__ = ["KINDS", "LANGUAGES", "search_chunks", "symbol_hits"]

LIMIT_MAX = domain.RESULTS_MAX
SNIPPET_LINES = 8
SNIPPET_WIDTH = 160
# bm25() column weights: name, signature, doc, body, path (CODE_FTS_COLUMNS).
WEIGHTS = (10.0, 4.0, 2.0, 1.0, 2.0)
POOL_FACTOR = 5
# A chunk whose own name is a word of the query ("where is JSONDecoder defined") is
# what the user is after more often than one that merely mentions it.
NAME_BONUS = 2.0

LANGUAGES = frozenset(
    {*EXTENSIONS.values(), *TEXT_LANGUAGES.values(), "text", "makefile", "dockerfile"}
)
# What a search may be limited to: source code, or prose pages (Markdown, RST).
KINDS = ("code", "docs")


def _limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= LIMIT_MAX:
        raise InvalidInput(f"limit must be a whole number from 1 to {LIMIT_MAX}, got {limit!r}")
    return limit


def _snippet(text: str, first: int = 0) -> str:
    lines = [line for line in text.split("\n")[first:] if line.strip()][:SNIPPET_LINES]
    return "\n".join(line[:SNIPPET_WIDTH].rstrip() for line in lines)


def search_chunks(
    conn: Connection,
    root_id: int,
    query: str,
    language: str | None,
    limit: int,
    dense: DenseCodeRanker | None,
    kind: str | None = None,
) -> list[CodeHit]:
    limit = _limit(limit)
    if kind is not None and kind not in KINDS:
        raise InvalidInput(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    if not isinstance(query, str) or not query.strip():
        raise InvalidQuery("query is empty; say what code to look for")
    if language is not None and language not in LANGUAGES:
        raise InvalidInput(
            f"unknown language {language!r}; choose one of {', '.join(sorted(LANGUAGES))}"
        )
    match = fts_query(query)
    if match is None:
        raise InvalidQuery(f"query {query!r} has no words to search for")
    pool = max(limit * POOL_FACTOR, 30)
    keyword = tables.keyword(conn, root_id, match, WEIGHTS, pool, language=language,
                             docs=None if kind is None else kind == "docs",
                             doc_languages=DOC_LANGUAGES)
    rankings = {"keyword": keyword}
    if dense is not None:
        rankings[dense.name] = dense.search(conn, root_id, query, pool, None)
    fused = fuse(rankings, {}) if dense is not None else keyword
    ranks = {name: {cid: i for i, (cid, _) in enumerate(r, 1)} for name, r in rankings.items()}
    scores = {name: dict(r) for name, r in rankings.items()}
    rows = tables.chunk_rows(conn, [cid for cid, _ in fused])
    words = {w.lower() for w in re.findall(r"\w+", query)}
    boosted: list[tuple[int, float]] = []
    for cid, score in fused:
        row = rows.get(cid)
        if row is None or (language is not None and row["language"] != language):
            continue
        if kind is not None and (row["language"] in DOC_LANGUAGES) != (kind == "docs"):
            continue
        short = (row["name"] or "").rsplit(".", 1)[-1].lower()
        boosted.append((cid, score * NAME_BONUS if short and short in words else score))
    boosted.sort(key=lambda item: (-item[1], item[0]))
    hits: list[CodeHit] = []
    for cid, score in boosted[:limit]:
        row = rows[cid]
        hits.append(
            CodeHit(
                path=row["path"],
                start_line=row["start_line"],
                end_line=row["end_line"],
                language=row["language"],
                kind=row["kind"],
                name=row["name"],
                signature=row["signature"] or "",
                snippet=_snippet(row["text"]),
                score=round(score, 6),
                scores={n: round(s[cid], 6) for n, s in scores.items() if cid in s},
                ranks={n: r[cid] for n, r in ranks.items() if cid in r},
            )
        )
    return hits


def symbol_hits(conn: Connection, root_id: int, name: str, limit: int) -> list[SymbolHit]:
    limit = _limit(limit)
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("symbol name is empty; give the name of a function, class, ...")
    name = name.strip()
    hits: list[SymbolHit] = []
    own_chunks: set[int] = set()
    for chunk_id, short, qualified, kind, path, start, end, lang, sig, text in tables.definitions(
        conn, root_id, name, limit
    ):
        own_chunks.add(chunk_id)
        hits.append(
            SymbolHit(
                role="definition",
                name=short,
                qualified_name=qualified,
                kind=kind,
                path=path,
                start_line=start,
                end_line=end,
                line=start,
                language=lang,
                signature=sig,
                snippet=_snippet(text or ""),
            )
        )
    token = re.split(r"::|\.", name)[-1]
    if not re.fullmatch(r"\w+", token):
        return hits
    hits.extend(_references(conn, root_id, token, own_chunks, limit - len(hits)))
    return hits


def _references(
    conn: Connection, root_id: int, token: str, exclude: set[int], limit: int
) -> list[SymbolHit]:
    """Chunks whose text holds ``token`` as a whole identifier (case-sensitive)."""
    if limit <= 0:
        return []
    pattern = re.compile(rf"(?<![\w$]){re.escape(token)}(?![\w$])")
    out: list[SymbolHit] = []
    seen: set[tuple[str, int]] = set()
    for cid, path, start, end, lang, kind, text in tables.references(conn, root_id, token):
        if cid in exclude:
            continue
        found = next(
            ((n, line) for n, line in enumerate(text.split("\n")) if pattern.search(line)), None
        )
        if found is None:
            continue
        offset, line = found
        if (path, start + offset) in seen:
            continue
        seen.add((path, start + offset))
        out.append(
            SymbolHit(
                role="reference",
                name=token,
                kind=kind,
                path=path,
                start_line=start,
                end_line=end,
                line=start + offset,
                language=lang,
                snippet=line.strip()[:SNIPPET_WIDTH],
            )
        )
        if len(out) >= limit:
            break
    return out
