"""The code index's reads for ranking: FTS5 bm25 over chunks, chunk rows, definitions
and identifier references (engine/code/search.py builds the hits)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..protocol import Connection

__all__ = ["CHUNK_COLUMNS", "chunk_rows", "definitions", "keyword", "references"]

CHUNK_COLUMNS = ("id", "path", "start_line", "end_line", "language", "kind", "name", "text")
_KIND_ORDER = (
    "CASE s.kind WHEN 'class' THEN 0 WHEN 'struct' THEN 0 WHEN 'interface' THEN 0 "
    "WHEN 'trait' THEN 0 WHEN 'enum' THEN 0 WHEN 'function' THEN 1 WHEN 'method' THEN 2 "
    "ELSE 3 END"
)


def keyword(
    conn: Connection, root: int, match: str, weights: Sequence[float], pool: int, *,
    language: str | None = None, docs: bool | None = None, doc_languages: Iterable[str] = (),
) -> list[tuple[int, float]]:
    """(chunk id, bm25 score, higher is better) of the best ``pool`` chunks matching the
    FTS5 query ``match``; ``docs`` True keeps prose pages (``doc_languages``) only, False
    source code only."""
    sql = (
        f"SELECT c.id, -bm25(code_fts, {', '.join(map(str, weights))}) AS score "
        "FROM code_fts JOIN code_chunks c ON c.id = code_fts.rowid "
        "WHERE code_fts MATCH ? AND c.root_id = ?"
    )
    args: list[Any] = [match, root]
    if language is not None:
        sql += " AND c.language = ?"
        args.append(language)
    if docs is not None:
        listed = f"({', '.join(repr(lang) for lang in sorted(doc_languages))})"
        sql += f" AND c.language {'' if docs else 'NOT '}IN {listed}"
    sql += " ORDER BY score DESC, c.id LIMIT ?"
    args.append(pool)
    return [(int(cid), float(score)) for cid, score in conn.execute(sql, args)]


def chunk_rows(conn: Connection, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """CHUNK_COLUMNS and the chunk's symbol's ``signature``, by chunk id."""
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT c.id, f.path, c.start_line, c.end_line, c.language, c.kind, c.name, c.text, "
        "(SELECT s.signature FROM code_symbols s WHERE s.chunk_id = c.id LIMIT 1) "
        "FROM code_chunks c JOIN code_files f ON f.id = c.file_id "
        f"WHERE c.id IN ({','.join('?' * len(ids))})",
        list(ids),
    )
    out: dict[int, dict[str, Any]] = {}
    for values in rows:
        row = dict(zip(CHUNK_COLUMNS, values[:-1], strict=True))
        row["signature"] = values[-1]
        out[int(values[0])] = row
    return out


def definitions(conn: Connection, root: int, name: str, limit: int) -> list[tuple[Any, ...]]:
    """(chunk id, name, qualified name, kind, path, start, end, language, signature, text)
    of the symbols named ``name``, exact spelling first, else ignoring case; types before
    functions before methods."""
    select = (
        "SELECT s.chunk_id, s.name, s.qualified_name, s.kind, f.path, s.start_line, "
        "s.end_line, f.language, s.signature, c.text FROM code_symbols s "
        "JOIN code_files f ON f.id = s.file_id LEFT JOIN code_chunks c ON c.id = s.chunk_id "
        "WHERE s.root_id = ? AND "
    )
    order = f" ORDER BY s.qualified_name = ? DESC, {_KIND_ORDER}, f.path, s.start_line LIMIT ?"
    rows: list[tuple[Any, ...]] = conn.execute(
        select + "(s.name = ? OR s.qualified_name = ?)" + order,
        (root, name, name, name, limit),
    ).fetchall()
    if not rows:  # nothing spelled exactly so: try ignoring case
        rows = conn.execute(
            select + "(s.name = ? COLLATE NOCASE OR s.qualified_name = ? COLLATE NOCASE)" + order,
            (root, name, name, name, limit),
        ).fetchall()
    return rows


def references(conn: Connection, root: int, token: str,
               ) -> Iterator[tuple[int, str, int, int, str, str, str]]:
    """(chunk id, path, start, end, language, kind, text) of chunks whose body holds the
    word ``token``, best bm25 first, streamed (the caller stops when it has enough)."""
    cursor = conn.execute(
        "SELECT c.id, f.path, c.start_line, c.end_line, c.language, c.kind, c.text "
        "FROM code_fts JOIN code_chunks c ON c.id = code_fts.rowid "
        "JOIN code_files f ON f.id = c.file_id "
        "WHERE code_fts MATCH ? AND c.root_id = ? ORDER BY rank, c.id",
        ('body : "' + token.lower().replace('"', '""') + '"', root),
    )
    for cid, path, start, end, lang, kind, text in cursor:
        yield int(cid), str(path), int(start), int(end), str(lang), str(kind), str(text)
