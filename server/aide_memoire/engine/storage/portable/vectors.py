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

import numpy as np

from ...core.space import EmbeddingSpace
from ..protocol import Connection, Cursor, Database
from ..repositories import BlockReader

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

    # -- the mirror's reads (engine/recall/mirror.py) ------------------------------------

    def mirror_state(self, conn: Connection, space_key: str, namespace: str
                     ) -> tuple[int, int] | None:
        """(max_rowid, epoch) of a namespace's vectors: changes whenever they do."""
        state = conn.execute(
            "SELECT max_rowid, epoch FROM vector_state WHERE space = ? AND namespace = ?",
            (space_key, namespace)).fetchone()
        return None if state is None else (int(state[0]), int(state[1]))

    def namespace_rows(self, conn: Connection, namespace: str) -> int:
        return int(conn.execute("SELECT count(*) FROM memories WHERE namespace = ?",
                                (namespace,)).fetchone()[0])

    def appended(self, conn: Connection, table: str, namespace: str, after: int) -> Cursor:
        """(rowid, float32 blob, session_id, position, kind) of the rows above ``after``,
        rowid ascending. Walked from the rows table's rowid range (the namespace only
        filters): vec0 does not narrow a scan by rowid, and the same query driven from it
        read the whole partition for every refresh (1.8 s for 100 new rows at 30k, loaded
        machine). ``|| ''`` keeps SQLite off the namespace index and runs on PostgreSQL."""
        return conn.execute(
            f"SELECT m.rowid, v.embedding, m.session_id, m.position, m.kind FROM memories m "
            f"JOIN {table} v ON v.rowid = m.rowid "
            "WHERE m.rowid > ? AND m.namespace || '' = ? ORDER BY m.rowid",
            (after, namespace))

    def partition(self, conn: Connection, table: str, namespace: str, *, ordered: bool
                  ) -> Cursor:
        """The same columns for a whole namespace; unordered, in the table's own order
        (an ORDER BY made SQLite sort every blob in memory: +460 MB at 300k rows)."""
        return conn.execute(
            f"SELECT v.rowid, v.embedding, m.session_id, m.position, m.kind FROM {table} v "
            "JOIN memories m ON m.rowid = v.rowid WHERE v.namespace = ?"
            + (" ORDER BY v.rowid" if ordered else ""), (namespace,))

    def raw_vectors(self, conn: Connection, table: str, rowids: Sequence[int]
                    ) -> dict[int, np.ndarray]:
        """The stored float32 vectors of ``rowids`` (those that have one)."""
        out: dict[int, np.ndarray] = {}
        for start in range(0, len(rowids), 500):
            chunk = list(rowids[start : start + 500])
            for rowid, blob in conn.execute(
                f"SELECT rowid, embedding FROM {table} WHERE rowid IN "
                f"({','.join('?' * len(chunk))})", chunk):
                out[int(rowid)] = np.frombuffer(blob, np.float32)
        return out

    def stream(self, conn: Connection, table: str, namespace: str) -> Cursor:
        """(rowid, float32 blob) of a whole namespace, for a namespace over the budget."""
        return conn.execute(f"SELECT rowid, embedding FROM {table} WHERE namespace = ?",
                            (namespace,))

    def turn_keys(self, conn: Connection, namespace: str) -> list[tuple[int, str, int]]:
        """(rowid, session_id, position) of a namespace's turns, by session and position
        (the order of the (namespace, session_id, position) index)."""
        return [(int(r), str(s), int(p)) for r, s, p in conn.execute(
            "SELECT rowid, session_id, position FROM memories WHERE namespace = ? AND "
            "session_id IS NOT NULL AND position IS NOT NULL ORDER BY session_id, position",
            (namespace,))]

    def session_rows(self, conn: Connection, namespace: str, session: str, low: int,
                     high: int) -> list[tuple[int, int]]:
        """(rowid, position) of a session's turns with a position in [low, high]."""
        return [(int(r), int(p)) for r, p in conn.execute(
            "SELECT rowid, position FROM memories WHERE namespace = ? AND session_id = ? "
            "AND position BETWEEN ? AND ?", (namespace, session, low, high))]

    # -- int8 blocks: a backend that keeps them overrides these (storage/sqlite) ----------

    def block_reader(self, conn: Connection, space: EmbeddingSpace, namespace: str,
                     state: tuple[int, int]) -> BlockReader | None:
        """The namespace's blocks when they match ``state``; None: read the vectors."""
        return None

    def blocks_need_build(self, conn: Connection, space: EmbeddingSpace, namespace: str,
                          state: tuple[int, int]) -> bool:
        return False

    def rebuild_blocks(self, db: Database, space: EmbeddingSpace, namespace: str) -> bool:
        return False

    def compact_blocks(self, tx: Connection) -> int:
        return 0
