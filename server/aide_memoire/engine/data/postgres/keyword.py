"""Keyword index and search on PostgreSQL full-text search, ranked like BM25.

A memory's keyword document is SQLite's seven FTS5 columns (engine/compose.py) as one
``tsvector``, each column weighted with one of PostgreSQL's four classes. The classes come
from recall's own column weights (fusion.KEYWORD_WEIGHTS: four distinct values today,
highest = A), so the two backends weigh a turn's neighbours alike; a change to those
weights that reorders them needs a re-index here.

``ts_rank`` alone has no idea how rare a word is: an OR of a question's words would be
ranked by its most common ones. The score is therefore BM25's shape: for each query word,
its inverse document frequency in the searched namespaces (counted from the GIN index)
times ``ts_rank`` of the word in the document (its weighted frequency, normalised by
document length), summed. Every matching row of the namespaces is scored: no row cap.

PostgreSQL has no diacritic folding without the ``unaccent`` extension (not shipped with
every server): text and query words are folded here, in Python, the same way.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from ...fusion import KEYWORD_WEIGHTS
from ...migrations import FTS_COLUMNS
from ..protocol import Connection

__all__ = [
    "COLUMN_CLASSES", "RANK_WEIGHTS", "TS_CONFIG", "fold", "index_document", "keyword_search",
    "ranked_search", "unindex",
]

TS_CONFIG = "memory_text"  # made by schema step 1: English stemming, no stop words


def _classes() -> tuple[dict[str, str], list[float]]:
    levels = sorted({KEYWORD_WEIGHTS[c] for c in FTS_COLUMNS}, reverse=True)
    if len(levels) > 4:
        raise AssertionError("PostgreSQL ranks four weight classes; recall uses more")
    letters = dict(zip(levels, "ABCD", strict=False))
    classes = {column: letters[KEYWORD_WEIGHTS[column]] for column in FTS_COLUMNS}
    # ts_rank takes the weights as {D, C, B, A}; an unused class weighs as the lowest.
    by_letter = {letter: level for level, letter in letters.items()}
    weights = [by_letter.get(letter, levels[-1]) for letter in "DCBA"]
    return classes, weights


COLUMN_CLASSES, RANK_WEIGHTS = _classes()

_DOCUMENT_SQL = " || ".join(
    f"setweight(to_tsvector('{TS_CONFIG}', ?), '{COLUMN_CLASSES[c]}')" for c in FTS_COLUMNS
)


def fold(text: str) -> str:
    """Text without its diacritics ("café" -> "cafe"), as FTS5's remove_diacritics 2."""
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize(
        "NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    )


def index_document(tx: Connection, rowid: int, namespace: str, doc: Sequence[str]) -> None:
    """(Re)write a memory's keyword document; ``doc`` is in FTS_COLUMNS order."""
    if len(doc) != len(FTS_COLUMNS):
        raise ValueError(f"a keyword document has {len(FTS_COLUMNS)} columns, not {len(doc)}")
    tx.execute(
        f"INSERT INTO memory_fts (rowid, namespace, document) VALUES (?, ?, {_DOCUMENT_SQL}) "
        "ON CONFLICT (rowid) DO UPDATE SET namespace = excluded.namespace, "
        "document = excluded.document",
        (rowid, namespace, *(fold(text) for text in doc)),
    )


def unindex(tx: Connection, rowid: int) -> None:
    tx.execute("DELETE FROM memory_fts WHERE rowid = ?", (rowid,))


def keyword_search(
    conn: Connection,
    terms: Sequence[str],
    namespaces: Sequence[str],
    *,
    limit: int | None = None,
    statuses: Sequence[str] = ("active",),
) -> list[tuple[int, float]]:
    """(rowid, score) of the memories holding any of ``terms``, best first.

    Each term is searched as plain words (no query syntax reaches the server); a term
    the configuration reduces to nothing is dropped. Scores are comparable within one
    search only, as SQLite's bm25.
    """
    return ranked_search(
        conn, [[t] for t in terms], namespaces, "m.status = ANY(?)", [list(statuses)],
        limit=limit,
    )


def ranked_search(
    conn: Connection,
    alternatives: Sequence[Sequence[str]],
    namespaces: Sequence[str],
    clause: str,
    params: Sequence[object],
    *,
    limit: int | None = None,
) -> list[tuple[int, float]]:
    """(rowid, score) of the memories (alias ``m``, passing ``clause``) that hold every
    word of at least one of ``alternatives`` (an OR of ANDs), best first.

    The score sums, over every query word, its inverse document frequency in
    ``namespaces`` times its ``ts_rank`` in the document (see the module's docstring).
    """
    groups = [[fold(t) for t in group if t and t.strip()] for group in alternatives]
    groups = [g for g in groups if g]
    words = list(dict.fromkeys(w for g in groups for w in g))
    if not words or not namespaces:
        return []
    spaces = list(namespaces)
    plain = f"plainto_tsquery('{TS_CONFIG}', ?)"
    parts = ["(" + " && ".join(plain for _ in g) + ")" for g in groups]
    sql = f"""
WITH q AS (
    SELECT plainto_tsquery('{TS_CONFIG}', t.word) AS query
    FROM unnest(?::text[]) AS t(word)
), n AS (
    SELECT count(*) AS total FROM memory_fts WHERE namespace = ANY(?)
), idf AS (
    SELECT q.query, ln(1 + (n.total - df.c + 0.5) / (df.c + 0.5)) AS w
    FROM q CROSS JOIN n CROSS JOIN LATERAL (
        SELECT count(*) AS c FROM memory_fts f
        WHERE f.namespace = ANY(?) AND f.document @@ q.query) AS df
    WHERE numnode(q.query) > 0
)
SELECT f.rowid,
       (SELECT sum(idf.w * ts_rank(?::float4[], f.document, idf.query, 1)) FROM idf) AS score
FROM memory_fts f JOIN memories m ON m.rowid = f.rowid
WHERE f.namespace = ANY(?) AND f.document @@ ({" || ".join(parts)}) AND {clause}
ORDER BY score DESC, f.rowid"""
    args: list[object] = [words, spaces, spaces, RANK_WEIGHTS, spaces,
                          *(w for g in groups for w in g), *params]
    if limit is not None:
        sql += " LIMIT ?"
        args.append(int(limit))
    return [(int(r), float(s)) for r, s in conn.execute(sql, args)]
