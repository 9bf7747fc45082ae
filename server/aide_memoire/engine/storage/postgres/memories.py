"""The memories repository on PostgreSQL (the :class:`~..repositories.MemoryRows` Protocol).

What both dialects run as written is storage/portable/memories.py's; this class adds
PostgreSQL's forms of the rest: JSON text cast to ``json`` (SQLite's ``json_each`` /
``json_extract``), ``IS NOT DISTINCT FROM`` (``IS ?``), ``GREATEST`` (two-argument
``max()``), ``strpos`` (``instr``), ``= ANY(?)`` arrays, the filter (filters.where_pg) and
the indexes (keyword_index.py, vector_index.py). The shared repository tests
(tests/postgres/test_repositories.py) run both classes on the same calls and compare
the answers.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime

from ...core import clock
from ...core.compose import fts_document
from ...core.errors import StoreError
from ...core.models import MemoryRecord
from ..filter import RowFilter
from ..portable.memories import PortableMemoryRows
from ..protocol import Connection
from ..rows import COLUMNS, NewRow, indexed, insert_values
from . import row_reads
from .connection import PgConnection
from .filters import where_pg
from .keyword import index_new_documents
from .keyword_index import PostgresKeywordIndex
from .snapshot import memo
from .vector_index import PostgresVectorIndex

__all__ = ["PostgresMemoryRows"]


class PostgresMemoryRows(PortableMemoryRows):
    """The ``memories`` table with its full-text and pgvector indexes."""

    render = staticmethod(where_pg)
    same_slot = ("session_id IS NOT DISTINCT FROM ?::text "
                 "AND position IS NOT DISTINCT FROM ?::bigint")
    id_in = "id = ANY(?)"
    holds = "strpos(metadata, ?) > 0"
    citing_order = " ORDER BY rowid"

    def __init__(
        self,
        vectors: PostgresVectorIndex | None = None,
        keywords: PostgresKeywordIndex | None = None,
    ) -> None:
        self.vectors = vectors or PostgresVectorIndex()
        self.keywords = keywords or PostgresKeywordIndex()

    def insert_many(
        self, tx: Connection, rows: Sequence[NewRow], *, at: datetime | None = None
    ) -> builtins.list[tuple[int, str]]:
        """Insert rows with their keyword documents, as :meth:`insert` one by one would,
        in a few statements (a bulk load: bench/scale.py's ``--bulk``). (rowid, id) per
        row, in order."""
        if not rows:
            return []
        if not isinstance(tx, PgConnection):
            raise StoreError("a bulk insert needs the PostgreSQL store's own connection")
        # Out of pipeline mode: a statement of megabytes sent pipelined can leave the
        # client and the server each waiting for the other (seen here at 2,000 rows).
        with tx.outside_pipeline():
            return self._insert_many(tx, rows, at)

    def _insert_many(self, tx: Connection, rows: Sequence[NewRow], at: datetime | None
                     ) -> builtins.list[tuple[int, str]]:
        stamp = at or clock.now()
        ids = [row.id or clock.new_id() for row in rows]
        records = [dict(zip(COLUMNS, insert_values(row, memory_id, stamp), strict=True))
                   for row, memory_id in zip(rows, ids, strict=True)]
        columns = ", ".join(COLUMNS)
        found = {str(i): int(r) for r, i in tx.execute(
            f"INSERT INTO memories ({columns}) SELECT {columns} "
            "FROM json_populate_recordset(NULL::memories, ?::json) RETURNING rowid, id",
            (json.dumps(records, ensure_ascii=False),),
        ).fetchall()}
        rowids = [found[i] for i in ids]
        index_new_documents(tx, [(rowid, row.namespace, fts_document(indexed(row)))
                                 for rowid, row in zip(rowids, rows, strict=True)])
        return list(zip(rowids, ids, strict=True))

    # -- recall's reads, memoised within a read-only snapshot (snapshot.py) -----------

    def size_hint(self, conn: Connection) -> int:
        found = memo(conn)
        return int(found["max_rowid"]) if found is not None else super().size_hint(conn)

    def records(self, conn: Connection, rowids: Iterable[int]) -> dict[int, MemoryRecord]:
        return row_reads.records(conn, rowids)

    def usage(self, conn: Connection, rowids: Sequence[int]) -> Iterator[row_reads.Usage]:
        return iter(row_reads.usage(conn, rowids))

    def replacements(self, conn: Connection, rowids: Sequence[int]
                     ) -> builtins.list[tuple[int, int]]:
        return row_reads.replacements(conn, rowids)

    def passing(self, conn: Connection, rowids: Iterable[int], where: RowFilter) -> set[int]:
        """The rowids among ``rowids`` that pass ``where`` (storage/sqlite's ``passing``)."""
        return row_reads.passing(conn, rowids, *where_pg(where, "m"))

    def metadata_values(
        self, conn: Connection, namespace: str, kind: str, source: str, key: str
    ) -> set[str]:
        """The distinct values of a top-level metadata key over a namespace's rows of one
        kind and source (the capture hook's turn uuids)."""
        if not key.isidentifier():
            raise ValueError(f"metadata key {key!r} is not a plain name")
        rows = conn.execute(
            "SELECT metadata::json ->> ? FROM memories "
            "WHERE namespace = ? AND kind = ? AND source = ?",
            (key, namespace, kind, source),
        ).fetchall()
        return {str(r[0]) for r in rows if r[0] is not None}

    def record_access(self, tx: Connection, items: Iterable[tuple[int, str, str]]) -> None:
        """(extra accesses, latest access time, id) per memory: counts add up and the
        last access only moves forward."""
        tx.executemany(
            "UPDATE memories SET access_count = access_count + ?, "
            "last_accessed_at = GREATEST(COALESCE(last_accessed_at, ''), ?) WHERE id = ?",
            builtins.list(items),
        )

    def metadata_expiries(
        self, conn: Connection, namespace: str
    ) -> builtins.list[tuple[str, object]]:
        """(id, metadata.expires_at as stored) of a namespace's active memories that set it.

        As stored: a JSON number comes back a number, text as text (json_extract's way).
        """
        return [(str(i), e) for i, e in conn.execute(
            "SELECT id, metadata::json -> 'expires_at' FROM memories WHERE namespace = ? "
            "AND status = 'active' AND metadata::json ->> 'expires_at' IS NOT NULL "
            "ORDER BY rowid",
            (namespace,),
        )]
