"""Dense vectors: sqlite-vec ``vec0`` tables in the store, searched through an in-process cache.

Each embedding space (model + dimension) has its own ``vec0`` table, partitioned by
namespace, written in the same transaction as the row. Recall scores *every* vector of
the namespace: the vectors are mirrored into a numpy matrix per (space, namespace) that
follows the table through ``vector_state`` (appends load only the new rows; any other
change reloads), so a query costs one matrix product, not a table scan, at any size.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .embed import EmbeddingSpace
from .errors import StoreError

__all__ = ["VectorCache", "VectorTables"]

_TABLE_RE = re.compile(r"^memory_vec_[0-9a-z_]+$")


def _blob(vector: Any) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


class VectorTables:
    """SQL for the vec0 tables and their bookkeeping."""

    def __init__(self, vec_available: bool) -> None:
        self.vec_available = vec_available

    @staticmethod
    def table_name(space: EmbeddingSpace) -> str:
        name = f"memory_vec_{space.key}"
        assert _TABLE_RE.match(name)
        return name

    def ensure_space(self, tx: Any, space: EmbeddingSpace, stamp: str) -> str:
        table = self.table_name(space)
        found = tx.execute("SELECT table_name FROM vector_spaces WHERE key = ?", (space.key,)).fetchone()
        if found:
            return str(found[0])
        self._require_vec()
        tx.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0("
            f"namespace text partition key, embedding float[{int(space.dim)}])"
        )
        tx.execute(
            "INSERT INTO vector_spaces (key, model, dim, table_name, created_at) VALUES (?,?,?,?,?)",
            (space.key, space.model, space.dim, table, stamp),
        )
        return table

    def spaces(self, conn: Any) -> list[tuple[str, str, int, str]]:
        return [
            (str(k), str(m), int(d), str(t))
            for k, m, d, t in conn.execute(
                "SELECT key, model, dim, table_name FROM vector_spaces ORDER BY created_at"
            )
        ]

    def _require_vec(self) -> None:
        if not self.vec_available:
            raise StoreError(
                "this store keeps dense vectors but sqlite-vec is not loaded here; install "
                "'aide-memoire[vectors]' (and a driver that loads extensions) to change it"
            )

    def insert(
        self, tx: Any, space: EmbeddingSpace, items: Sequence[tuple[int, str, Any]], stamp: str
    ) -> None:
        """Add (rowid, namespace, vector) items; replaces any vector the rows had."""
        if not items:
            return
        table = self.ensure_space(tx, space, stamp)
        self._require_vec()
        rowids = [rowid for rowid, _, _ in items]
        existing = {
            int(r)
            for (r,) in tx.execute(
                f"SELECT rowid FROM {table} WHERE rowid IN ({','.join('?' * len(rowids))})",
                rowids,
            )
        } if len(rowids) <= 900 else None
        replaced = set()
        for rowid, namespace, vector in items:
            if existing is None or rowid in existing:
                deleted = tx.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,)).rowcount
                if deleted:
                    replaced.add(namespace)
            tx.execute(
                f"INSERT INTO {table} (rowid, namespace, embedding) VALUES (?, ?, ?)",
                (rowid, namespace, _blob(vector)),
            )
        per_namespace: dict[str, int] = {}
        for rowid, namespace, _ in items:
            per_namespace[namespace] = max(per_namespace.get(namespace, 0), rowid)
        for namespace, top in per_namespace.items():
            state = tx.execute(
                "SELECT max_rowid FROM vector_state WHERE space = ? AND namespace = ?",
                (space.key, namespace),
            ).fetchone()
            appended = state is None or min(r for r, ns, _ in items if ns == namespace) > state[0]
            tx.execute(
                "INSERT INTO vector_state (space, namespace, max_rowid, epoch) VALUES (?, ?, ?, 0) "
                "ON CONFLICT (space, namespace) DO UPDATE SET "
                "max_rowid = max(max_rowid, excluded.max_rowid), "
                "epoch = epoch + ?",
                (space.key, namespace, top, 0 if appended and namespace not in replaced else 1),
            )

    def delete(self, tx: Any, rowid: int, namespace: str) -> None:
        """Remove a row's vectors from every space."""
        for key, _, _, table in self.spaces(tx):
            self._require_vec()
            if tx.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,)).rowcount:
                tx.execute(
                    "UPDATE vector_state SET epoch = epoch + 1 WHERE space = ? AND namespace = ?",
                    (key, namespace),
                )

    def missing(self, conn: Any, space: EmbeddingSpace, namespace: str | None, limit: int) -> list[int]:
        """Rowids with no vector in ``space`` (for re-embedding), oldest first."""
        found = conn.execute("SELECT table_name FROM vector_spaces WHERE key = ?", (space.key,)).fetchone()
        where = "WHERE m.namespace = ?" if namespace else ""
        args: list[Any] = [namespace] if namespace else []
        if not found:
            sql = f"SELECT m.rowid FROM memories m {where} ORDER BY m.rowid LIMIT ?"
        else:
            self._require_vec()
            joiner = "AND" if namespace else "WHERE"
            sql = (
                f"SELECT m.rowid FROM memories m {where} {joiner} NOT EXISTS "
                f"(SELECT 1 FROM {found[0]} v WHERE v.rowid = m.rowid) ORDER BY m.rowid LIMIT ?"
            )
        return [int(r) for (r,) in conn.execute(sql, [*args, limit])]


@dataclass
class _Slice:
    epoch: int = -1
    max_rowid: int = 0
    rowids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    matrix: np.ndarray | None = None


class VectorCache:
    """Per-process mirror of the vectors of each (space, namespace), refreshed on demand."""

    def __init__(self) -> None:
        self._slices: dict[tuple[str, str], _Slice] = {}
        self._lock = threading.Lock()

    def _refresh(self, conn: Any, space: EmbeddingSpace, table: str, namespace: str) -> _Slice:
        key = (space.key, namespace)
        state = conn.execute(
            "SELECT max_rowid, epoch FROM vector_state WHERE space = ? AND namespace = ?",
            key,
        ).fetchone()
        cached = self._slices.get(key) or _Slice()
        if state is None:
            self._slices[key] = _Slice(epoch=0)
            return self._slices[key]
        max_rowid, epoch = int(state[0]), int(state[1])
        if epoch == cached.epoch and max_rowid == cached.max_rowid:
            return cached
        if epoch != cached.epoch or cached.matrix is None:
            since = 0
            base_ids = np.zeros(0, dtype=np.int64)
            base = np.zeros((0, space.dim), dtype=np.float32)
        else:
            since = cached.max_rowid
            base_ids, base = cached.rowids, cached.matrix
        rows = conn.execute(
            f"SELECT rowid, embedding FROM {table} WHERE namespace = ? AND rowid > ?",
            (namespace, since),
        ).fetchall()
        if rows:
            ids = np.fromiter((r for r, _ in rows), dtype=np.int64, count=len(rows))
            mat = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
            mat = mat.reshape(len(rows), space.dim)
            base_ids = np.concatenate([base_ids, ids])
            base = np.concatenate([base, mat]) if len(base) else mat.copy()
        fresh = _Slice(epoch=epoch, max_rowid=max_rowid, rowids=base_ids, matrix=base)
        self._slices[key] = fresh
        return fresh

    def search(
        self,
        conn: Any,
        space: EmbeddingSpace,
        table: str,
        namespaces: Sequence[str],
        query: np.ndarray,
        k: int,
    ) -> list[tuple[int, float]]:
        """(rowid, cosine) of the k nearest vectors over every row of the namespaces."""
        with self._lock:
            slices = [self._refresh(conn, space, table, ns) for ns in namespaces]
        ids = [s.rowids for s in slices if s.matrix is not None and len(s.rowids)]
        if not ids:
            return []
        mats = [s.matrix for s in slices if s.matrix is not None and len(s.rowids)]
        rowids = ids[0] if len(ids) == 1 else np.concatenate(ids)
        scores = mats[0] @ query if len(mats) == 1 else np.concatenate([m @ query for m in mats])
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(int(rowids[i]), float(scores[i])) for i in top]

    def scores_for(
        self, conn: Any, space: EmbeddingSpace, table: str, namespace: str, query: np.ndarray,
        rowids: Sequence[int],
    ) -> dict[int, float]:
        """Cosine of given rows (used to score keyword candidates on the dense side)."""
        with self._lock:
            s = self._refresh(conn, space, table, namespace)
        if s.matrix is None or not len(s.rowids):
            return {}
        index = {int(r): i for i, r in enumerate(s.rowids)}
        wanted = [(r, index[r]) for r in rowids if r in index]
        if not wanted:
            return {}
        sims = s.matrix[[i for _, i in wanted]] @ query
        return {r: float(x) for (r, _), x in zip(wanted, sims, strict=True)}
