"""Dense vectors on SQLite: sqlite-vec ``vec0`` tables, one per embedding space.

Each embedding space (model + dimension) has its own ``vec0`` table, partitioned by
namespace, written in the same transaction as the row. ``vector_state`` tells the
in-process mirror (engine/recall/mirror.py) when a namespace's vectors changed, and the
int8 blocks (vector_blocks.py) follow every change in the same transaction, so the
mirror starts from one sequential read instead of a scan of vec0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...core.errors import StoreError
from ...core.space import EmbeddingSpace
from ..portable.vectors import PortableVectorReads
from ..protocol import Connection, Database
from ..repositories import BlockReader
from .vector_blocks import SqliteVectorBlocks, rebuild

__all__ = ["CHUNK_MAX", "CHUNK_MIN", "SqliteVectorIndex", "chunk_size_for"]

_TABLE_RE = re.compile(r"^memory_vec_[0-9a-z_]+$")

# vec0 reserves a whole chunk (chunk_size vectors) per partition, i.e. per namespace, as
# soon as the partition's first vector lands: at its default of 1024 that is 1.5 MB for
# one 384-d memory. Recall reads vectors through the numpy mirror, never vec0's KNN, so a
# small chunk costs nothing measurable (bench/store_size.py); a space created in a store
# that already holds many memories (reembed) gets bigger chunks, bounded by the default.
CHUNK_MIN, CHUNK_MAX = 16, 1024


def chunk_size_for(largest_namespace: int) -> int:
    """vec0 ``chunk_size`` for a new space: a partition of that many rows fills ~8 chunks."""
    size = CHUNK_MIN
    while size < largest_namespace // 8 and size < CHUNK_MAX:
        size *= 2
    return size


def _blob(vector: Any) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


class SqliteVectorIndex(PortableVectorReads):
    """The vec0 tables (one per embedding space) and their bookkeeping
    (``vector_spaces``, ``vector_state``)."""

    engine = "sqlite-vec"

    def __init__(self, vec_available: bool) -> None:
        self.vec_available = vec_available
        self.blocks = SqliteVectorBlocks()

    @staticmethod
    def table_name(space: EmbeddingSpace) -> str:
        name = f"memory_vec_{space.key}"
        assert _TABLE_RE.match(name)
        return name

    def ensure_space(self, tx: Connection, space: EmbeddingSpace, stamp: str) -> str:
        table = self.table_name(space)
        found = self.table_of(tx, space)
        if found:
            return found
        self._require_vec()
        largest = tx.execute(
            "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM memories "
            "GROUP BY namespace)"
        ).fetchone()[0]
        tx.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0("
            f"namespace text partition key, embedding float[{int(space.dim)}], "
            f"chunk_size={chunk_size_for(int(largest))})"
        )
        tx.execute(
            "INSERT INTO vector_spaces (key, model, dim, table_name, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (space.key, space.model, space.dim, table, stamp),
        )
        return table

    def _require_vec(self) -> None:
        if not self.vec_available:
            raise StoreError(
                "this store keeps dense vectors but sqlite-vec is not loaded here; install "
                "'aide-memoire[vectors]' (and a driver that loads extensions) to change it"
            )

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
        self._require_vec()
        # A row's old vector goes by a point delete (a few microseconds, found or not):
        # vec0 answers ``rowid = ?`` from its rowid index but ``rowid IN (...)`` by
        # scanning every row (0.29 s a batch at 1M rows; docs/benchmarks.md, issue 28
        # round 10), so no batched existence check comes first.
        replaced: dict[str, list[int]] = {}
        for rowid, namespace, vector in items:
            if tx.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,)).rowcount:
                replaced.setdefault(namespace, []).append(rowid)
            tx.execute(
                f"INSERT INTO {table} (rowid, namespace, embedding) VALUES (?, ?, ?)",
                (rowid, namespace, _blob(vector)),
            )
        per_namespace: dict[str, list[tuple[int, Any]]] = {}
        for rowid, namespace, vector in items:
            per_namespace.setdefault(namespace, []).append((rowid, vector))
        for namespace, added in per_namespace.items():
            before = self.mirror_state(tx, space.key, namespace)
            top = max(r for r, _ in added)
            appended = before is None or min(r for r, _ in added) > before[0]
            tx.execute(
                "INSERT INTO vector_state (space, namespace, max_rowid, epoch) VALUES (?, ?, ?, 0) "
                "ON CONFLICT (space, namespace) DO UPDATE SET "
                "max_rowid = max(max_rowid, excluded.max_rowid), "
                "epoch = epoch + ?",
                (space.key, namespace, top, 0 if appended and namespace not in replaced else 1),
            )
            after = self.mirror_state(tx, space.key, namespace)
            assert after is not None
            if before is None:  # a namespace's first vector: its blocks start whole
                self.blocks.begin(tx, space.key, namespace, (0, 0), status="live")
                before = (0, 0)
            self.blocks.after_write(tx, space.key, space.dim, namespace, before, after,
                                    added, replaced.get(namespace, []))

    def raw_vectors(self, conn: Connection, table: str, rowids: Sequence[int]
                    ) -> dict[int, np.ndarray]:
        """The stored float32 vectors of ``rowids`` (those that have one), a point
        lookup each: vec0 answers ``rowid IN (...)`` by scanning every row (see the
        comment in :meth:`insert`)."""
        out: dict[int, np.ndarray] = {}
        for rowid in rowids:
            found = conn.execute(f"SELECT embedding FROM {table} WHERE rowid = ?",
                                 (rowid,)).fetchone()
            if found is not None:
                out[int(rowid)] = np.frombuffer(found[0], np.float32)
        return out

    def delete(self, tx: Connection, rowid: int, namespace: str) -> None:
        """Remove a row's vectors from every space."""
        for key, _, dim, table in self.spaces(tx):
            self._require_vec()
            if tx.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,)).rowcount:
                before = self.mirror_state(tx, key, namespace)
                tx.execute(
                    "UPDATE vector_state SET epoch = epoch + 1 WHERE space = ? AND namespace = ?",
                    (key, namespace),
                )
                after = self.mirror_state(tx, key, namespace)
                if after is not None:
                    self.blocks.after_write(tx, key, dim, namespace, before, after, [], [rowid])

    # -- the int8 blocks (vector_blocks.py) ----------------------------------------------

    def block_reader(self, conn: Connection, space: EmbeddingSpace, namespace: str,
                     state: tuple[int, int]) -> BlockReader | None:
        if not self.blocks.usable(conn, space.key, namespace, state):
            return None
        return self.blocks.read(conn, space.key, namespace, space.dim)

    def blocks_need_build(self, conn: Connection, space: EmbeddingSpace, namespace: str,
                          state: tuple[int, int]) -> bool:
        return self.blocks.needs_build(conn, space.key, namespace, state)

    def compact_blocks(self, tx: Connection) -> int:
        """Drop forgotten rows' int8 copies from the blocks (forget's purge)."""
        return self.blocks.compact(tx, {key: dim for key, _, dim, _ in self.spaces(tx)})

    def rebuild_blocks(self, db: Database, space: EmbeddingSpace, namespace: str) -> bool:
        """Build a namespace's blocks from vec0 (in the background: writes go on)."""
        with db.read() as conn:
            table = self.table_of(conn, space)
        if table is None:
            return False
        return rebuild(db, self.blocks, lambda c: self.mirror_state(c, space.key, namespace),
                       space.key, space.dim, table, namespace)
