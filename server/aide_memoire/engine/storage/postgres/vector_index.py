"""The vector repository on PostgreSQL (the :class:`~..repositories.VectorIndex` Protocol).

Tables, partitions and HNSW indexes are vectors.py's; this class writes through them
and keeps ``vector_state`` (the in-process mirror's signal that a namespace's vectors
changed) exactly as SQLite keeps it. The reads (spaces, missing rows, vectors for near
duplicates, one memory's vector) are portable as written (storage/portable/vectors.py):
the connection reads ``vector`` as float32 bytes (connection.py), the form sqlite-vec
hands back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...core.errors import StoreError
from ...core.space import EmbeddingSpace
from ..portable.vectors import PortableVectorReads
from ..protocol import Connection
from . import vectors
from .connection import PgConnection
from .snapshot import memo

__all__ = ["PostgresVectorIndex"]

def _pg(conn: Connection) -> PgConnection:
    # vectors.py quotes partition values with the driver's own quoting (conn.raw).
    if not isinstance(conn, PgConnection):
        raise StoreError("the PostgreSQL vector index was handed a connection of another store")
    return conn


class PostgresVectorIndex(PortableVectorReads):
    """pgvector tables (one per embedding space) and their bookkeeping."""

    engine = "pgvector"
    vec_available = True  # pgvector is schema step 2: always there

    @staticmethod
    def table_name(space: EmbeddingSpace) -> str:
        return vectors.table_name(space.key)

    def table_of(self, conn: Connection, space: EmbeddingSpace) -> str | None:
        found = memo(conn)  # a read-only snapshot read every space's table when it began
        if found is None:
            return super().table_of(conn, space)
        table: str | None = found["tables"].get(space.key)
        return table

    def mirror_state(self, conn: Connection, space_key: str, namespace: str
                     ) -> tuple[int, int] | None:
        found = memo(conn)
        if found is None or "vector_state" not in found:  # many namespaces: read per recall
            return super().mirror_state(conn, space_key, namespace)
        state: tuple[int, int] | None = found["vector_state"].get((space_key, namespace))
        return state

    def ensure_space(self, tx: Connection, space: EmbeddingSpace, stamp: str) -> str:
        return vectors.ensure_space(_pg(tx), space.key, space.model, space.dim, stamp)

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
            [(rowid, ns, np.asarray(v, dtype=np.float32)) for rowid, ns, v in items],
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
