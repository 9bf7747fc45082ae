"""The keyword index on SQLite: the FTS5 table ``memory_fts`` and its BM25.

Documents are keyed by the memory's rowid (the table is contentless: migration 2), so
every change of a row's text rewrites its document in the same transaction.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from ...core.compose import FtsDoc
from ...core.text import fts_query
from ..filter import RowFilter
from ..protocol import Connection
from .filters import where_sql

__all__ = ["SqliteKeywordIndex"]


class SqliteKeywordIndex:
    """FTS5 documents, MATCH queries ranked by bm25(), document counts."""

    ranking = "FTS5 BM25 over every row of the namespace"

    def add(self, tx: Connection, rowid: int, doc: FtsDoc) -> None:
        tx.execute(
            "INSERT INTO memory_fts (rowid, content, speaker, context, after, window, tags, dates)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (rowid, *doc),
        )

    def remove(self, tx: Connection, rowid: int) -> None:
        tx.execute("DELETE FROM memory_fts WHERE rowid = ?", (rowid,))

    def search(
        self,
        conn: Connection,
        match: str,
        where: RowFilter,
        limit: int | None,
        weights: Sequence[float],
    ) -> list[tuple[int, float]]:
        """(rowid, score) best first; score = -bm25, higher is better. No row cap."""
        clause, params = where_sql(where, "m")
        weight_args = ", ".join(str(float(w)) for w in weights)
        sql = (
            f"SELECT m.rowid, -bm25(memory_fts, {weight_args}) AS score FROM memory_fts "
            f"JOIN memories m ON m.rowid = memory_fts.rowid "
            f"WHERE memory_fts MATCH ? AND {clause} ORDER BY score DESC"
        )
        args: list[Any] = [match, *params]
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        return [(int(r), float(s)) for r, s in conn.execute(sql, args)]

    def document_counts(self, conn: Connection, terms: Sequence[str], cap: int) -> dict[str, int]:
        """Memories holding each term (store-wide, stemmed as the search does), counted
        up to ``cap`` from rowids alone; a term FTS5 cannot search counts 0."""
        out: dict[str, int] = {}
        for term in terms:
            match = fts_query([term])
            if match is None:
                out[term] = 0
                continue
            (count,) = conn.execute(
                "SELECT count(*) FROM (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
                "LIMIT ?)",
                (match, cap),
            ).fetchone()
            out[term] = int(count)
        return out

    def write_marker(self, conn: Connection) -> Hashable:
        """FTS5's averages record (rows and tokens of the index) and structure record
        (its segments, with a counter of every write): one of them changes with every
        committed add, remove or merge, from this connection or any other, and both are
        read by primary key (rowids 1 and 10 of ``memory_fts_data``, FTS5's own)."""
        return tuple(bytes(block) for _id, block in conn.execute(
            "SELECT id, block FROM memory_fts_data WHERE id IN (1, 10) ORDER BY id"))

    def optimize(self, tx: Connection) -> None:
        """Merge the index's segments, so deleted documents' terms leave the file."""
        tx.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')")
