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
from ..rows import RowFilter, content_hash
from .filters import passing, where_sql
from .keyword import SqliteKeywordIndex
from .vectors import SqliteVectorIndex

__all__ = ["SqliteMemoryRows", "passing"]


class SqliteMemoryRows(PortableMemoryRows):
    """The ``memories`` table with its FTS5 and vec0 indexes."""

    render = staticmethod(where_sql)

    def __init__(
        self, vectors: SqliteVectorIndex | None = None, keywords: SqliteKeywordIndex | None = None
    ) -> None:
        self.vectors = vectors or SqliteVectorIndex(vec_available=False)
        self.keywords = keywords or SqliteKeywordIndex()

    def passing(self, conn: Connection, rowids: Iterable[int], where: RowFilter) -> set[int]:
        """The rowids among ``rowids`` that pass ``where`` (see :func:`passing`)."""
        return passing(conn, rowids, where)

    def find_exact(
        self,
        conn: Connection,
        namespace: str,
        content: str,
        kind: str,
        session_id: str | None,
        position: int | None,
    ) -> str | None:
        """An active or quarantined memory with the same text (and the same turn slot)."""
        found = conn.execute(
            "SELECT id FROM memories WHERE namespace = ? AND content_hash = ? AND kind = ? "
            "AND status IN ('active', 'quarantined') "
            # '+' keeps the planner on the hash index: with session_id IS NULL it would
            # take memories_ns_session and scan every non-turn row of the namespace.
            "AND +session_id IS ? AND +position IS ? LIMIT 1",
            (namespace, content_hash(content), kind, session_id, position),
        ).fetchone()
        return str(found[0]) if found else None

    def summaries_citing(
        self, conn: Connection, namespace: str, memory_id: str, linked: Iterable[str]
    ) -> builtins.list[tuple[int, str, str]]:
        """(rowid, id, metadata JSON) of the namespace's summaries whose id is in ``linked``
        or whose metadata names ``memory_id`` (a cheap text test; the caller parses)."""
        return [
            (int(r), str(i), str(m))
            for r, i, m in conn.execute(
                "SELECT rowid, id, metadata FROM memories WHERE namespace = ? "
                "AND kind = 'summary' "
                "AND (id IN (SELECT value FROM json_each(?)) OR instr(metadata, ?) > 0)",
                (namespace, json.dumps(sorted(linked)), json.dumps(memory_id)),
            )
        ]

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

