"""The vector repository's reads both dialects run as written.

Spaces, missing rows, the vectors near-duplicate checks read, one memory's vector: the
same SQL on sqlite-vec's ``vec0`` tables and pgvector's (whose connection reads
``vector`` as float32 bytes, the form sqlite-vec hands back). Each backend's subclass
(storage/sqlite/vectors.py, storage/postgres/vector_index.py) names its tables and
writes them its own way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...core.space import EmbeddingSpace
from ..protocol import Connection

__all__ = ["PortableVectorReads"]


class PortableVectorReads:
    """The reads of the vector bookkeeping (``vector_spaces``) and the vector tables."""

    @staticmethod
    def table_name(space: EmbeddingSpace) -> str:
        raise NotImplementedError  # each backend names its tables

    def _require_vec(self) -> None:
        """Raise when the vector tables cannot be read here (SQLite without sqlite-vec)."""

    def spaces(self, conn: Connection) -> list[tuple[str, str, int, str]]:
        return [
            (str(k), str(m), int(d), str(t))
            for k, m, d, t in conn.execute(
                "SELECT key, model, dim, table_name FROM vector_spaces ORDER BY created_at"
            )
        ]

    def table_of(self, conn: Connection, space: EmbeddingSpace) -> str | None:
        """The table holding ``space``'s vectors, or None while the space has none."""
        found = conn.execute(
            "SELECT table_name FROM vector_spaces WHERE key = ?", (space.key,)
        ).fetchone()
        return str(found[0]) if found else None

    def missing(
        self,
        conn: Connection,
        space: EmbeddingSpace,
        namespace: str | None,
        limit: int,
        after: int = 0,
    ) -> list[int]:
        """Rowids above ``after`` with no vector in ``space`` (for re-embedding), oldest first."""
        found = self.table_of(conn, space)
        # A cursor (rowid > after) keeps a long re-embedding pass linear, not quadratic.
        where = "WHERE m.rowid > ?" + (" AND m.namespace = ?" if namespace else "")
        args: list[Any] = [after, namespace] if namespace else [after]
        if not found:
            sql = f"SELECT m.rowid FROM memories m {where} ORDER BY m.rowid LIMIT ?"
        else:
            self._require_vec()
            sql = (
                f"SELECT m.rowid FROM memories m {where} AND NOT EXISTS "
                f"(SELECT 1 FROM {found} v WHERE v.rowid = m.rowid) ORDER BY m.rowid LIMIT ?"
            )
        return [int(r) for (r,) in conn.execute(sql, [*args, limit])]

    def dedup_rows(
        self,
        conn: Connection,
        table: str,
        namespace: str,
        kinds: Sequence[str],
        *,
        above: int,
        below: int | None,
        active_only: bool,
    ) -> list[tuple[int, str, str, bytes]]:
        """(rowid, id, kind, float32 blob) of a namespace's non-turn memories of ``kinds``
        with a vector in ``table``, rowid in (above, below), oldest first."""
        sql = (
            f"SELECT m.rowid, m.id, m.kind, v.embedding FROM {table} v "
            "JOIN memories m ON m.rowid = v.rowid "
            f"WHERE v.namespace = ? AND m.kind IN ({','.join('?' * len(kinds))}) "
            "AND m.session_id IS NULL AND m.rowid > ?"
        )
        args: list[Any] = [namespace, *kinds, above]
        if below is not None:
            sql += " AND m.rowid < ?"
            args.append(below)
        if active_only:
            sql += " AND m.status = 'active'"
        return [(int(r), str(i), str(k), bytes(b))
                for r, i, k, b in conn.execute(sql + " ORDER BY m.rowid", args)]

    def count_missing(self, conn: Connection, space: EmbeddingSpace, namespace: str | None) -> int:
        """Memories (of a namespace, or all) with no vector in ``space``."""
        found = self.table_of(conn, space)
        where, args = ("WHERE m.namespace = ?", [namespace]) if namespace else ("", [])
        if not found:
            return int(conn.execute(f"SELECT count(*) FROM memories m {where}",
                                    args).fetchone()[0])
        joiner = "AND" if namespace else "WHERE"
        return int(conn.execute(
            f"SELECT count(*) FROM memories m {where} {joiner} NOT EXISTS "
            f"(SELECT 1 FROM {found} v WHERE v.rowid = m.rowid)", args
        ).fetchone()[0])

    def embedding_of(self, conn: Connection, space: EmbeddingSpace, memory_id: str) -> bytes | None:
        """A memory's float32 vector in ``space`` (None if it has none)."""
        found = conn.execute(
            f"SELECT v.embedding FROM memories m JOIN {self.table_name(space)} v "
            "ON v.rowid = m.rowid WHERE m.id = ?", (memory_id,)).fetchone()
        return bytes(found[0]) if found else None
