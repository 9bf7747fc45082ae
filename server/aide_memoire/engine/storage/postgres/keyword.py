"""Keyword index and search on PostgreSQL, scored exactly as SQLite's FTS5 ``bm25()``.

A memory's keyword document is SQLite's seven FTS5 columns (engine/core/compose.py), tokenised
by FTS5 itself (keyword_tokens.py), and stored as FTS5 keeps it: per (term, memory) the
term's frequency in each column and its places (for phrases); per memory its length in
tokens; for the whole index its rows and tokens (schema step 11). A search then computes
FTS5's bm25 in one statement (fts5_aux.c, fts5Bm25Function):

    score = sum over phrases i of  idf_i * F_i * (k1 + 1) / (F_i + k1 * (1 - b + b * D / avgD))

with k1 = 1.2, b = 0.75, F_i the phrase's occurrences in the row weighted by their
column's weight, D the row's tokens over all columns, avgD the index's tokens per row,
and idf_i = ln((N - n_i + 0.5) / (n_i + 0.5)) (1e-6 at or below zero) over the whole
index, every namespace and status, as FTS5 counts n_i (rows holding the phrase) and N and
the tokens behind avgD (every document ever written: SQLite's contentless-delete table
never takes a deleted or rewritten document out of its totals, and neither does
keyword_totals). A word's n_i is read from keyword_terms, which the postings' triggers
keep. Each quoted term of the query is one phrase, counted once per appearance; a
phrase in an AND group counts in a row only when the whole group is there, as in FTS5.
Scores are FTS5's (higher is better here: -bm25), so fusion's calibration against the
ideal score (calibrate.py) means the same on both backends.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from ...core.errors import StoreError
from ...recall.fusion import KEYWORD_WEIGHTS
from ..migrations import FTS_COLUMNS
from ..protocol import Connection
from .connection import PgConnection
from .errors import translate as translate_error
from .keyword_tokens import COLUMN_SHIFT, document_postings, documents_postings, phrase_tokens
from .snapshot import memo

__all__ = [
    "index_document", "index_new_documents", "keyword_search", "phrase_count", "ranked_search",
    "unindex", "word_counts",
]

K1, B = 1.2, 0.75  # FTS5's bm25 constants
IDF_FLOOR = 1e-6  # FTS5's idf for a phrase in half the rows or more (calibrate.py too)
DEFAULT_WEIGHTS = tuple(KEYWORD_WEIGHTS[c] for c in FTS_COLUMNS)


def index_document(tx: Connection, rowid: int, namespace: str, doc: Sequence[str]) -> None:
    """(Re)write a memory's keyword document; ``doc`` is in FTS_COLUMNS order."""
    postings, length = document_postings(doc)
    tx.execute("DELETE FROM keyword_docs WHERE rowid = ?", (rowid,))
    tx.execute(
        "INSERT INTO keyword_docs (rowid, namespace, length) VALUES (?, ?, ?)",
        (rowid, namespace, length),
    )
    if not postings:
        return
    # One statement per document: the arrays travel as text and are cast by the server.
    tx.execute(
        "INSERT INTO keyword_postings (term, namespace, rowid, freqs, places) "
        "SELECT u.term, ?, ?, u.freqs::integer[], u.places::integer[] "
        "FROM unnest(?::text[], ?::text[], ?::text[]) AS u(term, freqs, places)",
        (
            namespace, rowid, [p.term for p in postings],
            ["{" + ",".join(map(str, p.freqs)) + "}" for p in postings],
            ["{" + ",".join(map(str, p.places)) + "}" for p in postings],
        ),
    )


def index_new_documents(
    tx: Connection, items: Sequence[tuple[int, str, Sequence[str]]], chunk: int = 1000
) -> None:
    """Write the keyword documents of rows inserted in this transaction, as
    :func:`index_document` would one by one, in a few statements: (rowid, namespace,
    doc) items. Each chunk's postings go in one COPY, which fires keyword_terms' trigger
    once, so a word common to the chunk is counted with one upsert instead of one per
    document (each of which also left the word's row one more dead version to step
    over); the rows' postings are written as COPY's text, not as bound arrays (whose
    per-element dumping cost more CPU than the tokens)."""
    for start in range(0, len(items), chunk):
        part = items[start:start + chunk]
        found = documents_postings([doc for _, _, doc in part])
        tx.execute(
            "INSERT INTO keyword_docs (rowid, namespace, length) "
            "SELECT * FROM unnest(?::bigint[], ?::text[], ?::integer[])",
            ([r for r, _, _ in part], [ns for _, ns, _ in part], [n for _, n in found]),
        )
        lines: list[str] = []
        for (rowid, namespace, _), (postings, _length) in zip(part, found, strict=True):
            tail = f"\t{_copy_text(namespace)}\t{rowid}\t"
            lines.extend(
                f"{_copy_text(p.term)}{tail}{{{','.join(map(str, p.freqs))}}}"
                f"\t{{{','.join(map(str, p.places))}}}\n" for p in postings)
        if lines:
            copy_rows(tx, "COPY keyword_postings (term, namespace, rowid, freqs, places) "
                      "FROM STDIN", "".join(lines))


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_text(value: str) -> str:
    """A value as COPY's text format writes it (backslash, tab, newline, CR escaped)."""
    return value.translate(_COPY_ESCAPES)


def copy_rows(tx: Connection, statement: str, data: str) -> None:
    """COPY ... FROM STDIN of ``data`` (text format) in the open transaction."""
    if not isinstance(tx, PgConnection):
        raise StoreError("COPY needs the PostgreSQL store's own connection")
    with tx.outside_pipeline() as raw, raw.cursor() as cursor:
        try:
            with cursor.copy(statement) as copy:
                copy.write(data)
        except psycopg.Error as exc:
            raise translate_error(exc, tx.where) from exc


def unindex(tx: Connection, rowid: int) -> None:
    tx.execute("DELETE FROM keyword_docs WHERE rowid = ?", (rowid,))


def _weights_sql(weights: Sequence[float]) -> str:
    """bm25()'s column weights as an SQL array: as FTS5, a column without one weighs 1.0
    and weights past the last column are ignored."""
    padded = [*weights[: len(FTS_COLUMNS)], *[1.0] * (len(FTS_COLUMNS) - len(weights))]
    return "(ARRAY[" + ", ".join(repr(float(w)) for w in padded) + "]::float8[])"


def _phrase_rows(
    tokens: Sequence[str], weights: str | None, namespaced: bool
) -> tuple[str, list[object]]:
    """FROM ... WHERE ... of the rows holding the phrase, with ``p0.rowid`` and, given
    ``weights``, ``x.f`` (its weighted occurrences) in scope; ``namespaced``: only rows
    of the ``?`` namespaces. Unweighted, a word's rows are read from the index alone."""
    params: list[object] = []
    joins = ""
    for k, token in enumerate(tokens[1:], start=1):
        joins += (f" JOIN keyword_postings p{k} ON p{k}.term = ? AND p{k}.namespace = "
                  f"p0.namespace AND p{k}.rowid = p0.rowid")
        params.append(token)
    column = f"{weights}[(o >> {COLUMN_SHIFT}) + 1]" if weights else "1.0"
    if len(tokens) == 1 and weights is None:
        lateral = " CROSS JOIN LATERAL (SELECT 1 AS n) x"
    elif len(tokens) == 1:
        columns = range(1, len(FTS_COLUMNS) + 1)
        freq = " + ".join(f"p0.freqs[{c}] * {weights}[{c}]" for c in columns)
        lateral = f" CROSS JOIN LATERAL (SELECT {freq} AS f, 1 AS n) x"
    else:
        # A phrase starts at o when its k-th token is at o + k, in the same column (the
        # column is the place's high bits).
        follows = " AND ".join(f"o + {k} = ANY(p{k}.places)" for k in range(1, len(tokens)))
        lateral = (f" CROSS JOIN LATERAL (SELECT coalesce(sum({column}), 0) AS f, count(*) AS n "
                   f"FROM unnest(p0.places) AS o WHERE {follows}) x")
    sql = f"keyword_postings p0{joins}{lateral} WHERE p0.term = ? AND x.n > 0"
    params.append(tokens[0])
    if namespaced:
        sql += " AND p0.namespace = ANY(?)"
    return sql, params


def _group_rows(
    group: Sequence[Sequence[str]], keys: Sequence[int], weights: str, alt: int,
    namespaces: Sequence[str], counts: dict[str, int],
) -> tuple[str, list[object]]:
    """SELECT of (alt, key, rowid, f) per phrase of an AND group of one-token phrases, for
    the namespaces' rows holding every one of them.

    The rows are found first from the postings' primary key alone (term, namespace,
    rowid: index-only), starting from the rarest word (``counts``) and probing the
    others' keys in turn, and only then are the frequencies of those few rows read, in
    one join. Each step is a subquery of its own (OFFSET 0), so the order is the one
    written: planned as one join of 2n postings, a group of 6-8 words spent 250-290 ms
    in the planner alone for a 30-45 ms execution (EXPLAIN ANALYZE at 100k). A union of
    each word's postings counted per row would fetch one heap page per posting of every
    word (a document's postings are written together, a word's are scattered).
    """
    words = sorted(dict.fromkeys(tokens[0] for tokens in group),
                   key=lambda w: (counts.get(w, 0), w))
    rows = ("SELECT q.namespace, q.rowid FROM keyword_postings q "
            "WHERE q.term = ? AND q.namespace = ANY(?)")
    params: list[object] = [words[0], list(namespaces)]
    for word in words[1:]:
        rows = (f"SELECT g.namespace, g.rowid FROM ({rows} OFFSET 0) AS g JOIN "
                "keyword_postings q ON q.term = ? AND q.namespace = g.namespace "
                "AND q.rowid = g.rowid")
        params.append(word)
    freq = " + ".join(f"r.freqs[{c}] * {weights}[{c}]" for c in range(1, len(FTS_COLUMNS) + 1))
    # One row per phrase of the group, a repeated word included (it counts twice, as in
    # FTS5), from the one posting of that word in the row.
    phrases = ", ".join(f"(?::text, {key})" for key in keys)
    params += [words, *(tokens[0] for tokens in group)]
    sql = (f"SELECT {alt} AS alt, x.key, g.rowid, {freq} AS f FROM ({rows} OFFSET 0) AS g "
           "JOIN keyword_postings r ON r.term = ANY(?) AND r.namespace = g.namespace "
           f"AND r.rowid = g.rowid JOIN (VALUES {phrases}) AS x(term, key) ON x.term = r.term")
    return sql, params


def _chained(group: Sequence[Sequence[str]]) -> bool:
    """An AND group of one-word phrases: searched as a chain (_group_rows)."""
    return len(group) > 1 and all(len(tokens) == 1 for tokens in group)


def word_counts(conn: Connection, words: Sequence[str]) -> dict[str, int]:
    """Rows of the whole index holding each word, from ``keyword_terms`` (one key per
    (word, namespace), kept by the postings' triggers: schema step 13)."""
    if not words:
        return {}
    kept = memo(conn)  # a read-only snapshot: the common-terms check read them already
    counts: dict[str, int] = kept.setdefault("word_counts", {}) if kept is not None else {}
    missing = [w for w in dict.fromkeys(words) if w not in counts]
    if missing:
        found = dict(conn.execute(
            "SELECT term, sum(docs) FROM keyword_terms WHERE term = ANY(?) GROUP BY term",
            (missing,)).fetchall())
        counts.update({w: int(found.get(w, 0)) for w in missing})
    return {word: counts[word] for word in words}


def _phrase_count_sql(tokens: Sequence[str], cap: int | None) -> tuple[str, list[object]]:
    """A scalar subquery: rows of the whole index holding a phrase of several tokens (up
    to ``cap``), counted from its rows (a phrase is rare in queries)."""
    rows, params = _phrase_rows(tokens, None, namespaced=False)
    if cap is None:
        return f"(SELECT count(*) FROM {rows})", params
    return f"(SELECT count(*) FROM (SELECT 1 FROM {rows} LIMIT ?) AS hits)", [*params, cap]


def phrase_count(conn: Connection, phrase: str, cap: int) -> int:
    """Rows of the whole index holding ``phrase`` (tokenised as FTS5 does), up to ``cap``."""
    tokens = phrase_tokens(phrase)
    if not tokens:
        return 0
    if len(tokens) == 1:
        return min(word_counts(conn, tokens)[tokens[0]], int(cap))
    count, params = _phrase_count_sql(tokens, int(cap))
    (found,) = conn.execute(f"SELECT {count}", params).fetchone()
    return int(found)


def keyword_search(
    conn: Connection,
    terms: Sequence[str],
    namespaces: Sequence[str],
    *,
    limit: int | None = None,
    statuses: Sequence[str] = ("active",),
) -> list[tuple[int, float]]:
    """(rowid, score) of the memories holding any of ``terms`` (each a phrase), best first.

    No query syntax reaches the server; a term FTS5 reduces to no token finds nothing.
    Scores are comparable within one search only, as SQLite's bm25.
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
    weights: Sequence[float] = DEFAULT_WEIGHTS,
) -> list[tuple[int, float]]:
    """(rowid, -bm25) of the memories (alias ``m``, passing ``clause``) that hold every
    phrase of at least one of ``alternatives`` (an OR of ANDs), best first."""
    groups = [[phrase_tokens(term) for term in group] for group in alternatives]
    # A phrase of no tokens matches nothing, and neither does a group holding one.
    groups = [g for g in groups if g and all(g)]
    if not groups or not namespaces:
        return []
    weight_sql = _weights_sql(weights)
    keys: dict[tuple[str, ...], int] = {}
    for group in groups:
        for tokens in group:
            keys.setdefault(tuple(tokens), len(keys))
    args: list[object] = []
    counts = []
    # The client needs the counts of an AND group's words (to start its chain from the
    # rarest); every other word's count is read by the search itself, unless the
    # snapshot has it already: no round trip of its own.
    chained = [tokens[0] for group in groups if _chained(group) for tokens in group]
    words = word_counts(conn, chained)
    kept = memo(conn)
    known = {**(kept.get("word_counts", {}) if kept is not None else {}), **words}
    for phrase, key in keys.items():
        if len(phrase) == 1 and phrase[0] in known:
            counts.append(f"({key}, ?::bigint)")
            args.append(known[phrase[0]])
            continue
        if len(phrase) == 1:
            counts.append(f"({key}, (SELECT coalesce(sum(docs), 0) FROM keyword_terms "
                          "WHERE term = ?))")
            args.append(phrase[0])
            continue
        count, count_params = _phrase_count_sql(phrase, None)
        counts.append(f"({key}, {count})")
        args += count_params
    hits = []
    for alt, group in enumerate(groups):
        if _chained(group):
            rows, rows_params = _group_rows(
                group, [keys[tuple(tokens)] for tokens in group], weight_sql, alt,
                namespaces, words)
            hits.append(rows)
            args += rows_params
            continue
        for tokens in group:
            rows, rows_params = _phrase_rows(tokens, weight_sql, namespaced=True)
            hits.append(f"SELECT {alt} AS alt, {keys[tuple(tokens)]} AS key, p0.rowid, "
                        f"x.f FROM {rows}")
            args += [*rows_params, list(namespaces)]
    args += [[len(g) for g in groups], *params]
    sql = f"""
WITH tot AS (
    SELECT coalesce(sum(docs), 0)::float8 AS n, coalesce(sum(tokens), 0)::float8 AS t
    FROM keyword_totals
), df (key, c) AS (VALUES {", ".join(counts)}
), idf AS (
    SELECT df.key, CASE WHEN (tot.n - df.c + 0.5) / (df.c + 0.5) > 1
                        THEN ln((tot.n - df.c + 0.5) / (df.c + 0.5)) ELSE {IDF_FLOOR} END AS w
    FROM df CROSS JOIN tot
), hits AS ({" UNION ALL ".join(hits)}
), per_group AS (
    SELECT h.rowid, h.alt, count(*) AS held,
           sum(idf.w * h.f * {K1 + 1} / (h.f + {K1} * ({1 - B} + {B} * d.length / (tot.t / tot.n))))
           AS s
    FROM hits h JOIN idf ON idf.key = h.key JOIN keyword_docs d ON d.rowid = h.rowid
    CROSS JOIN tot
    GROUP BY h.rowid, h.alt
)
SELECT g.rowid, sum(g.s) AS score
FROM per_group g JOIN memories m ON m.rowid = g.rowid
WHERE g.held = (?::integer[])[g.alt + 1] AND {clause}
GROUP BY g.rowid
ORDER BY score DESC, g.rowid"""
    if limit is not None:
        sql += " LIMIT ?"
        args.append(int(limit))
    found = [(int(r), float(s)) for r, s in conn.execute(sql, args)]
    if kept is not None:  # recall reads these rows' usage next: with the dense ones (row_reads)
        kept.setdefault("searched", set()).update(r for r, _ in found)
    return found
