"""The memories repository on SQLite: the statements only SQLite runs as written.

The rest of the repository is portable (storage/portable/memories.py); here are the
SQLite forms: ``json_each`` / ``json_extract`` on the JSON text columns, ``IS ?`` on a
parameter, two-argument ``max()``, ``instr``, ``NOT INDEXED``, the row filter
(filters.where_sql) and the FTS5 and vec0 indexes.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable

from ..portable.memories import PortableMemoryRows
from ..protocol import Connection
from ..rows import RowFilter
from .filters import passing, where_sql
from .keyword import SqliteKeywordIndex
from .vectors import SqliteVectorIndex

__all__ = ["SqliteMemoryRows", "passing"]


class SqliteMemoryRows(PortableMemoryRows):
    """The ``memories`` table with its FTS5 and vec0 indexes."""

    render = staticmethod(where_sql)
    # '+' keeps the planner on the hash index: with session_id IS NULL it would take
    # memories_ns_session and scan every non-turn row of the namespace.
    same_slot = "+session_id IS ? AND +position IS ?"
    id_in = "id IN (SELECT value FROM json_each(?))"
    holds = "instr(metadata, ?) > 0"

    @staticmethod
    def ids_param(ids: builtins.list[str]) -> object:
        return json.dumps(ids)

    def __init__(
        self, vectors: SqliteVectorIndex | None = None, keywords: SqliteKeywordIndex | None = None
    ) -> None:
        self.vectors = vectors or SqliteVectorIndex(vec_available=False)
        self.keywords = keywords or SqliteKeywordIndex()

    def passing(self, conn: Connection, rowids: Iterable[int], where: RowFilter) -> set[int]:
        """The rowids among ``rowids`` that pass ``where`` (see :func:`passing`)."""
        return passing(conn, rowids, where)

    def metadata_values(
        self, conn: Connection, namespace: str, kind: str, source: str, key: str
    ) -> set[str]:
        """The distinct values of a top-level metadata key over a namespace's rows of one
        kind and source (the capture hook's turn uuids)."""
        if not key.isidentifier():
            raise ValueError(f"metadata key {key!r} is not a plain name")
        rows = conn.execute(
            f"SELECT json_extract(metadata, '$.{key}') FROM memories "
            "WHERE namespace = ? AND kind = ? AND source = ?",
            (namespace, kind, source),
        ).fetchall()
        return {str(r[0]) for r in rows if r[0] is not None}

    def record_access(self, tx: Connection, items: Iterable[tuple[int, str, str]]) -> None:
        """(extra accesses, latest access time, id) per memory: counts add up and the
        last access only moves forward (two-argument max() is SQLite's GREATEST)."""
        tx.executemany(
            "UPDATE memories SET access_count = access_count + ?, "
            "last_accessed_at = max(COALESCE(last_accessed_at, ''), ?) WHERE id = ?",
            list(items),
        )

    # -- supersession (facts/supersede.py) --------------------------------------------

    def metadata_expiries(
        self, conn: Connection, namespace: str
    ) -> builtins.list[tuple[str, object]]:
        """(id, metadata.expires_at as stored) of a namespace's active memories that set it."""
        return [(str(i), e) for i, e in conn.execute(
            "SELECT id, json_extract(metadata, '$.expires_at') FROM memories WHERE namespace = ? "
            "AND status = 'active' AND json_extract(metadata, '$.expires_at') IS NOT NULL",
            (namespace,),
        )]

