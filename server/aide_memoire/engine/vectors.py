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
from typing import Any

import numpy as np

from .embed import EmbeddingSpace
from .errors import StoreError

__all__ = ["VectorCache", "VectorTables"]

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
        found = tx.execute(
            "SELECT table_name FROM vector_spaces WHERE key = ?", (space.key,)
        ).fetchone()
        if found:
            return str(found[0])
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
        existing = (
            {
                int(r)
                for (r,) in tx.execute(
                    f"SELECT rowid FROM {table} WHERE rowid IN ({','.join('?' * len(rowids))})",
                    rowids,
                )
            }
            if len(rowids) <= 900
            else None
        )
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

    def missing(
        self, conn: Any, space: EmbeddingSpace, namespace: str | None, limit: int, after: int = 0
    ) -> list[int]:
        """Rowids above ``after`` with no vector in ``space`` (for re-embedding), oldest first."""
        found = conn.execute(
            "SELECT table_name FROM vector_spaces WHERE key = ?", (space.key,)
        ).fetchone()
        # A cursor (rowid > after) keeps a long re-embedding pass linear, not quadratic.
        where = "WHERE m.rowid > ?" + (" AND m.namespace = ?" if namespace else "")
        args: list[Any] = [after, namespace] if namespace else [after]
        if not found:
            sql = f"SELECT m.rowid FROM memories m {where} ORDER BY m.rowid LIMIT ?"
        else:
            self._require_vec()
            sql = (
                f"SELECT m.rowid FROM memories m {where} AND NOT EXISTS "
                f"(SELECT 1 FROM {found[0]} v WHERE v.rowid = m.rowid) ORDER BY m.rowid LIMIT ?"
            )
        return [int(r) for (r,) in conn.execute(sql, [*args, limit])]


# Free dense context for a turn: its vector plus a little of the turns around it in the
# session (no extra encoding). Measured on LOCOMO: docs/benchmarks.md.
NEIGHBOUR_WEIGHTS = {-1: 0.3, 1: 0.15}


# Rows whose exact cosine sets a big slice's low end for min-max scaling.
_LOW_SAMPLE = 1024


def _closest(distance: np.ndarray, count: int) -> np.ndarray:
    """Indices of about the ``count`` smallest distances (all ties at the cut kept):
    a histogram of the small integer distances finds the cut in one pass."""
    cumulative = np.cumsum(np.bincount(distance))
    cut = int(np.searchsorted(cumulative, count))
    picked = np.flatnonzero(distance <= cut)
    if len(picked) > 2 * count:  # a huge tie at the cut: take exactly count
        picked = np.argpartition(distance, count - 1)[:count]
    return picked


def _dot(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Row-wise dot products in numpy's own loop: a BLAS gemv spreads over threads that
    contend with the encoder and other processes (10-100x slower under load, measured)."""
    scores: np.ndarray = np.einsum("ij,j->i", matrix, query)
    return scores


def sign_bits(vectors: np.ndarray, words: int) -> np.ndarray:
    """Each row's signs packed into ``words`` uint64 (1 = positive)."""
    packed = np.packbits(vectors > 0, axis=1)
    padded = np.zeros((len(vectors), words * 8), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    return padded.view(np.uint64)


class _Slice:
    """The vectors of one (space, namespace): raw, and smoothed with session neighbours."""

    def __init__(self, dim: int, epoch: int = -1) -> None:
        self.dim = dim
        self.epoch = epoch
        self.max_rowid = 0
        self.size = 0
        self.rowids = np.zeros(0, dtype=np.int64)
        self.raw = np.zeros((0, dim), dtype=np.float32)
        self.smooth = np.zeros((0, dim), dtype=np.float32)
        # Sign bits of the smoothed vectors, packed, one row per 64-bit word (column-major:
        # a big slice's first pass runs over long rows, 6x faster than per-vector sums).
        self.words = (dim + 63) // 64
        self.bits = np.zeros((self.words, 0), dtype=np.uint64)
        self.slot: dict[tuple[str, int], int] = {}
        self.key: list[tuple[str, int] | None] = []

    def _grow(self, extra: int) -> None:
        need = self.size + extra
        if need <= len(self.rowids):
            return
        capacity = max(need, 2 * len(self.rowids), 1024)
        for name in ("raw", "smooth"):
            bigger = np.zeros((capacity, self.dim), dtype=np.float32)
            bigger[: self.size] = getattr(self, name)[: self.size]
            setattr(self, name, bigger)
        ids = np.zeros(capacity, dtype=np.int64)
        ids[: self.size] = self.rowids[: self.size]
        self.rowids = ids
        bits = np.zeros((self.words, capacity), dtype=np.uint64)
        bits[:, : self.size] = self.bits[:, : self.size]
        self.bits = bits

    def append(
        self, rowids: np.ndarray, vectors: np.ndarray, keys: list[tuple[str, int] | None]
    ) -> None:
        self._grow(len(rowids))
        start, end = self.size, self.size + len(rowids)
        self.rowids[start:end] = rowids
        self.raw[start:end] = vectors
        self.smooth[start:end] = vectors
        self.size = end
        touched: set[int] = set()
        for offset, key in enumerate(keys):
            self.key.append(key)
            if key is None:
                continue
            self.slot[key] = start + offset
            session, position = key
            touched.add(start + offset)
            for delta in NEIGHBOUR_WEIGHTS:
                near = self.slot.get((session, position - delta))
                if near is not None:
                    touched.add(near)
        for index in touched:
            self._smooth(index)
        self.bits[:, start:end] = sign_bits(self.smooth[start:end], self.words).T
        for index in touched:
            if index < start:
                self.bits[:, index] = sign_bits(self.smooth[index : index + 1], self.words)[0]

    def search(
        self, query: np.ndarray, qbits: np.ndarray, must: np.ndarray, shortlist: int | None
    ) -> tuple[np.ndarray, np.ndarray, float, float]:
        """(rowids, exact cosines, low, high) for this slice's rows.

        Small slice, or ``shortlist`` None: every row, exactly. Big slice: every row is
        ranked by the Hamming distance of its sign bits to the query's (4.8 MB at 100k
        rows instead of 154 MB of floats), and the best ``shortlist`` of them plus the
        ``must`` rowids are scored exactly. ``low`` then comes from a fixed sample of
        rows, ``high`` from the shortlist (the best row is in it).
        """
        n = self.size
        if shortlist is None or n <= shortlist:
            scores = _dot(self.smooth[:n], query)
            if not n:
                return self.rowids[:0], scores, 0.0, 0.0
            return self.rowids[:n], scores, float(scores.min()), float(scores.max())
        distance = np.bitwise_count(self.bits[0, :n] ^ qbits[0]).astype(np.int16)
        for word in range(1, self.words):
            distance += np.bitwise_count(self.bits[word, :n] ^ qbits[word])
        picked = _closest(distance, shortlist)
        if len(must):
            at = np.minimum(np.searchsorted(self.rowids[:n], must), n - 1)
            picked = np.union1d(picked, at[self.rowids[at] == must])
        else:
            picked.sort()
        scores = _dot(self.smooth[picked], query)
        sample = _dot(self.smooth[: n : max(1, n // _LOW_SAMPLE)], query)
        low = float(min(sample.min(), scores.min()))
        return self.rowids[picked], scores, low, float(scores.max())

    def _smooth(self, index: int) -> None:
        key = self.key[index]
        if key is None:
            return
        session, position = key
        vector = self.raw[index].copy()
        for delta, weight in NEIGHBOUR_WEIGHTS.items():
            near = self.slot.get((session, position + delta))
            if near is not None:
                vector += weight * self.raw[near]
        norm = float(np.linalg.norm(vector))
        self.smooth[index] = vector / norm if norm else vector


class VectorCache:
    """Per-process mirror of the vectors of each (space, namespace), refreshed on demand."""

    def __init__(self) -> None:
        self._slices: dict[tuple[str, str], _Slice] = {}
        self._lock = threading.Lock()

    def _refresh(self, conn: Any, space: EmbeddingSpace, table: str, namespace: str) -> _Slice:
        key = (space.key, namespace)
        state = conn.execute(
            "SELECT max_rowid, epoch FROM vector_state WHERE space = ? AND namespace = ?", key
        ).fetchone()
        cached = self._slices.get(key)
        if state is None:
            fresh = _Slice(space.dim, epoch=0)
            self._slices[key] = fresh
            return fresh
        max_rowid, epoch = int(state[0]), int(state[1])
        if cached is not None and epoch == cached.epoch and max_rowid == cached.max_rowid:
            return cached
        if cached is None or epoch != cached.epoch:
            cached = _Slice(space.dim, epoch=epoch)
        rows = conn.execute(
            f"SELECT v.rowid, v.embedding, m.session_id, m.position FROM {table} v "
            "JOIN memories m ON m.rowid = v.rowid "
            "WHERE v.namespace = ? AND v.rowid > ? ORDER BY v.rowid",
            (namespace, cached.max_rowid),
        ).fetchall()
        if rows:
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            keys = [
                (str(r[2]), int(r[3])) if r[2] is not None and r[3] is not None else None
                for r in rows
            ]
            cached.append(ids, mat.reshape(len(rows), space.dim), keys)
        cached.max_rowid = max(max_rowid, cached.max_rowid)
        self._slices[key] = cached
        return cached

    def scores(
        self,
        conn: Any,
        space: EmbeddingSpace,
        table: str,
        namespaces: Sequence[str],
        query: np.ndarray,
        *,
        must: np.ndarray | None = None,
        shortlist: int = 3000,
        exact_up_to: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray, float, float]:
        """Rowids (ascending), their exact cosines to ``query``, and the low and high
        cosine over the namespaces: every row of a namespace up to ``exact_up_to`` rows
        (None: any size), else its ``shortlist`` plus ``must`` (see _Slice.search)."""
        must = np.zeros(0, dtype=np.int64) if must is None else np.sort(must)
        qbits = sign_bits(query[None, :], (len(query) + 63) // 64)[0]
        with self._lock:
            slices = [self._refresh(conn, space, table, ns) for ns in namespaces]
            parts = [
                s.search(query, qbits, must, None if exact_up_to is None or s.size <= exact_up_to
                         else shortlist)
                for s in slices
                if s.size
            ]
        if not parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32), 0.0, 0.0
        low, high = min(p[2] for p in parts), max(p[3] for p in parts)
        if len(parts) == 1:
            return parts[0][0], parts[0][1], low, high
        rowids = np.concatenate([p[0] for p in parts])
        order = np.argsort(rowids, kind="stable")
        return rowids[order], np.concatenate([p[1] for p in parts])[order], low, high
