"""The vector repository on PostgreSQL (the :class:`~..repositories.VectorIndex` Protocol).

Tables, partitions and HNSW indexes are vectors.py's; this class writes through them
and keeps ``vector_state`` (the in-process mirror's signal that a namespace's vectors
changed) exactly as SQLite keeps it. The reads (spaces, missing rows, vectors for near
duplicates, one memory's vector) are portable as written (storage/portable/vectors.py):
the connection reads ``vector`` as float32 bytes (connection.py), the form sqlite-vec
hands back.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ...core.errors import StoreError
from ...core.space import EmbeddingSpace
from ..portable.vectors import PortableVectorReads
from ..protocol import Connection, Cursor
from . import vectors
from .connection import PgConnection

__all__ = ["PostgresVectorIndex"]

# Rows of a namespace the mirror's first load reads per statement (see ``partition``).
PARTITION_CHUNK = 4096


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

    def partition(self, conn: Connection, table: str, namespace: str, *, ordered: bool
                  ) -> Cursor:
        """The mirror's first load of a namespace: the same rows as the portable read
        (rowid, float32 bytes, session_id, position, kind), always in rowid order, but
        fetched as one row of arrays per PARTITION_CHUNK rows, the vectors concatenated
        by the server (``vector_send``): one value to load per column and chunk instead
        of five per row. Row by row, the client's loaders were most of a first dense
        recall at 100k (docs/benchmarks.md, "PostgreSQL at scale")."""
        return _ChunkedPartition(conn, table, namespace)


class _ChunkedPartition:
    """A cursor over a namespace's vectors, a chunk of rows per statement (``partition``)."""

    rowcount = -1
    lastrowid = None

    def __init__(self, conn: Connection, table: str, namespace: str) -> None:
        self._conn, self._table, self._namespace = conn, table, namespace
        self._after = 0
        self._rows: list[tuple[int, bytes, str | None, int | None, str]] = []
        self._done = False

    def _chunk(self) -> None:
        found = self._conn.execute(
            "SELECT array_agg(c.rowid ORDER BY c.rowid), "
            "string_agg(vector_send(c.embedding), ''::bytea ORDER BY c.rowid), "
            "array_agg(m.session_id ORDER BY c.rowid), array_agg(m.position ORDER BY c.rowid), "
            "array_agg(m.kind ORDER BY c.rowid) "
            f"FROM (SELECT rowid, embedding FROM {self._table} WHERE namespace = ? "
            "AND rowid > ? ORDER BY rowid LIMIT ?) c JOIN memories m ON m.rowid = c.rowid",
            (self._namespace, self._after, PARTITION_CHUNK)).fetchone()
        if found is None or found[0] is None:
            self._done = True
            return
        rowids, blob, sessions, positions, kinds = found
        data = np.frombuffer(bytes(blob), np.uint8).reshape(len(rowids), -1)
        # vector_send: int16 dimensions, int16 zero, then big-endian float32s.
        floats = np.ascontiguousarray(data[:, 4:]).view(">f4").astype(np.float32)
        self._rows.extend(zip(
            (int(r) for r in rowids), (v.tobytes() for v in floats), sessions,
            (None if p is None else int(p) for p in positions), kinds, strict=True))
        self._after = int(rowids[-1])
        if len(rowids) < PARTITION_CHUNK:
            self._done = True

    def fetchmany(self, size: int = PARTITION_CHUNK) -> list[Any]:
        while len(self._rows) < size and not self._done:
            self._chunk()
        out, self._rows = self._rows[:size], self._rows[size:]
        return out

    def fetchone(self) -> Any:
        got = self.fetchmany(1)
        return got[0] if got else None

    def fetchall(self) -> list[Any]:
        out: list[Any] = []
        while batch := self.fetchmany():
            out.extend(batch)
        return out

    def __iter__(self) -> Iterator[Any]:
        while batch := self.fetchmany():
            yield from batch
