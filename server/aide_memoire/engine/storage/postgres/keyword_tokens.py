"""FTS5's own tokens for the PostgreSQL keyword index, from an in-memory FTS5 table.

The SQLite store tokenises with ``porter unicode61 remove_diacritics 2`` (migration 1).
PostgreSQL has no such tokenizer (its snowball English stems otherwise, its parser splits
otherwise), and a hand-written copy would drift with each SQLite release's Unicode tables.
So the PostgreSQL backend asks SQLite: a document is written into a private in-memory
FTS5 table with the same ``tokenize=`` and read back through its ``fts5vocab`` instance
view (term, column, offset), then deleted. The tokens, and so the scores, are FTS5's by
construction; tests/postgres/test_keyword_parity.py compares the rankings.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..driver import load_driver
from ..migrations import FTS_COLUMNS, FTS_TOKENIZE

__all__ = [
    "TOKENIZE", "Posting", "document_postings", "documents_postings", "phrase_tokens",
]

TOKENIZE = FTS_TOKENIZE  # the SQLite store's own (engine/storage/migrations.py step 1)

# A token's place in a document: column << 24 | offset, so that one integer array holds
# every column's offsets and "the next token" (offset + 1) never crosses into another
# column (a column of 16M tokens would exceed the content limit many times over).
COLUMN_SHIFT = 24


@dataclass(frozen=True)
class Posting:
    """One term of one document: its frequency per column and its places."""

    term: str
    freqs: tuple[int, ...]  # per column, FTS_COLUMNS order
    places: tuple[int, ...]  # column << COLUMN_SHIFT | offset, ascending


_local = threading.local()
_COLUMN_INDEX = {name: i for i, name in enumerate(FTS_COLUMNS)}


def _tokenizer() -> Any:
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = load_driver().connect(":memory:", check_same_thread=True)
        columns = ", ".join(FTS_COLUMNS)
        # Contentless: nothing but the index is kept, and 'delete-all' empties it at once.
        conn.execute(
            f"CREATE VIRTUAL TABLE doc USING fts5({columns}, content='', tokenize='{TOKENIZE}')"
        )
        conn.execute("CREATE VIRTUAL TABLE doc_tokens USING fts5vocab(doc, 'instance')")
        _local.conn = conn
    return conn


def _instances(columns: Sequence[str]) -> list[tuple[str, int, int]]:
    """(term, column index, offset) of every token of ``columns`` (FTS_COLUMNS order)."""
    conn = _tokenizer()
    names = ", ".join(FTS_COLUMNS[: len(columns)])
    marks = ", ".join("?" for _ in columns)
    try:
        conn.execute(f"INSERT INTO doc (rowid, {names}) VALUES (1, {marks})", tuple(columns))
        rows = conn.execute("SELECT term, col, offset FROM doc_tokens").fetchall()
    finally:
        conn.execute("INSERT INTO doc (doc) VALUES ('delete-all')")
    return [(str(term), _COLUMN_INDEX[str(col)], int(offset)) for term, col, offset in rows]


def _check(doc: Sequence[str]) -> None:
    if len(doc) != len(FTS_COLUMNS):
        raise ValueError(f"a keyword document has {len(FTS_COLUMNS)} columns, not {len(doc)}")


def _postings(instances: Sequence[tuple[str, int, int]]) -> tuple[list[Posting], int]:
    found: dict[str, tuple[list[int], list[int]]] = {}
    for term, column, offset in instances:
        freqs, places = found.setdefault(term, ([0] * len(FTS_COLUMNS), []))
        freqs[column] += 1
        places.append(column << COLUMN_SHIFT | offset)
    postings = [
        Posting(term, tuple(freqs), tuple(sorted(places)))
        for term, (freqs, places) in sorted(found.items())
    ]
    return postings, len(instances)


def document_postings(doc: Sequence[str]) -> tuple[list[Posting], int]:
    """The postings of a keyword document (FTS_COLUMNS order) and its length in tokens."""
    _check(doc)
    return _postings(_instances(doc))


def documents_postings(docs: Sequence[Sequence[str]]) -> list[tuple[list[Posting], int]]:
    """:func:`document_postings` of each document, the lot tokenised in three statements
    (a bulk load: one FTS5 insert, read back and emptied per document cost it 1.7 ms a
    document of CPU at load 20, more than the rows' own statements)."""
    for doc in docs:
        _check(doc)
    if not docs:
        return []
    conn = _tokenizer()
    names = ", ".join(FTS_COLUMNS)
    marks = ", ".join("?" for _ in FTS_COLUMNS)
    by_doc: list[list[tuple[str, int, int]]] = [[] for _ in docs]
    try:
        conn.executemany(f"INSERT INTO doc (rowid, {names}) VALUES (?, {marks})",
                         [(n + 1, *doc) for n, doc in enumerate(docs)])
        for term, number, col, offset in conn.execute(
                "SELECT term, doc, col, offset FROM doc_tokens"):
            by_doc[int(number) - 1].append((str(term), _COLUMN_INDEX[str(col)], int(offset)))
    finally:
        conn.execute("INSERT INTO doc (doc) VALUES ('delete-all')")
    return [_postings(found) for found in by_doc]


def phrase_tokens(phrase: str) -> list[str]:
    """The tokens of a quoted query term, in order: FTS5 searches them as one phrase."""
    return [term for term, _column, _offset in sorted(_instances([phrase]), key=lambda t: t[2])]
