"""The vector repository on PostgreSQL (the :class:`~..repositories.VectorIndex` Protocol).

Tables, partitions and HNSW indexes are vectors.py's; this class adds what the engine
asks of any backend: the space registry, ``vector_state`` (the in-process mirror's
signal that a namespace's vectors changed, kept exactly as SQLite keeps it), and
vectors handed out as float32 bytes, the form SQLite stores them in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...embed import EmbeddingSpace
from ...errors import StoreError
from ..protocol import Connection
from . import vectors
from .connection import PgConnection

__all__ = ["PostgresVectorIndex", "as_blob"]


def as_blob(value: Any) -> bytes:
    """A vector as read with ``::real[]`` (a list of floats) as float32 bytes."""
    return np.asarray(value, dtype=np.float32).tobytes()


def _pg(conn: Connection) -> PgConnection:
    # vectors.py quotes partition values with the driver's own quoting (conn.raw).
    if not isinstance(conn, PgConnection):
        raise StoreError("the PostgreSQL vector index was handed a connection of another store")
    return conn


class PostgresVectorIndex:
    """pgvector tables (one per embedding space) and their bookkeeping."""

    vec_available = True  # pgvector is part of the schema (step 2): always loaded

    @staticmethod
    def table_name(space: EmbeddingSpace) -> str:
        return vectors.table_name(space.key)

    def ensure_space(self, tx: Connection, space: EmbeddingSpace, stamp: str) -> str:
        return vectors.ensure_space(_pg(tx), space.key, space.model, space.dim, stamp)

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

    def insert(
        self,
        tx: Connection,
        space: EmbeddingSpace,
        items: Sequence[tuple[int, str, Any]],
        stamp: str,
    ) -> None:
        """Add (rowid, namespace, vector) items; replaces any vector the rows had."""
        if not items:
            return
        table = self.ensure_space(tx, space, stamp)
        rowids = [rowid for rowid, _, _ in items]
        replaced = {
            str(ns) for (ns,) in tx.execute(
                f"SELECT DISTINCT namespace FROM {table} WHERE rowid = ANY(?)", (rowids,))
        }
        vectors.insert_vectors(
            _pg(tx), table,
            [(rowid, ns, np.asarray(v, dtype=np.float32).tolist()) for rowid, ns, v in items],
        )
        for namespace in sorted({ns for _, ns, _ in items}):
            mine = [r for r, ns, _ in items if ns == namespace]
            state = tx.execute(
                "SELECT max_rowid FROM vector_state WHERE space = ? AND namespace = ?",
                (space.key, namespace),
            ).fetchone()
            # Appending above the mirror's high mark keeps its slice; anything else
            # (a replaced vector, a row below the mark) makes it reload (epoch + 1).
            appended = state is None or min(mine) > int(state[0])
            tx.execute(
                "INSERT INTO vector_state (space, namespace, max_rowid, epoch) "
                "VALUES (?, ?, ?, 0) ON CONFLICT (space, namespace) DO UPDATE SET "
                "max_rowid = GREATEST(vector_state.max_rowid, excluded.max_rowid), "
                "epoch = vector_state.epoch + ?",
                (space.key, namespace, max(mine),
                 0 if appended and namespace not in replaced else 1),
            )

    def delete(self, tx: Connection, rowid: int, namespace: str) -> None:
        """Remove a row's vectors from every space."""
        for key, _, _, table in self.spaces(tx):
            if vectors.delete_vectors(_pg(tx), table, [rowid]):
                tx.execute(
                    "UPDATE vector_state SET epoch = epoch + 1 WHERE space = ? AND namespace = ?",
                    (key, namespace),
                )

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
        where = "WHERE m.rowid > ?" + (" AND m.namespace = ?" if namespace else "")
        args: list[Any] = [after, namespace] if namespace else [after]
        if found:
            where += f" AND NOT EXISTS (SELECT 1 FROM {found} v WHERE v.rowid = m.rowid)"
        sql = f"SELECT m.rowid FROM memories m {where} ORDER BY m.rowid LIMIT ?"
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
            f"SELECT m.rowid, m.id, m.kind, v.embedding::real[] FROM {table} v "
            "JOIN memories m ON m.rowid = v.rowid "
            "WHERE v.namespace = ? AND m.kind = ANY(?) AND m.session_id IS NULL AND m.rowid > ?"
        )
        args: list[Any] = [namespace, list(kinds), above]
        if below is not None:
            sql += " AND m.rowid < ?"
            args.append(below)
        if active_only:
            sql += " AND m.status = 'active'"
        return [(int(r), str(i), str(k), as_blob(e))
                for r, i, k, e in conn.execute(sql + " ORDER BY m.rowid", args)]

    def count_missing(self, conn: Connection, space: EmbeddingSpace, namespace: str | None) -> int:
        """Memories (of a namespace, or all) with no vector in ``space``."""
        found = self.table_of(conn, space)
        clauses, args = (["m.namespace = ?"], [namespace]) if namespace else ([], [])
        if found:
            clauses.append(f"NOT EXISTS (SELECT 1 FROM {found} v WHERE v.rowid = m.rowid)")
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        return int(conn.execute(f"SELECT count(*) FROM memories m {where}", args).fetchone()[0])

    def embedding_of(self, conn: Connection, space: EmbeddingSpace, memory_id: str) -> bytes | None:
        """A memory's float32 vector in ``space`` (None if it has none)."""
        table = self.table_of(conn, space)
        if table is None:
            return None
        found = conn.execute(
            f"SELECT v.embedding::real[] FROM memories m JOIN {table} v "
            "ON v.rowid = m.rowid WHERE m.id = ?", (memory_id,)).fetchone()
        return as_blob(found[0]) if found else None
