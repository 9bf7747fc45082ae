"""The vector mirror: one bounded in-process copy of the stored vectors, shared by dense
recall and near-duplicate checks.

Per (space, namespace) a slice holds each row's vector once (a turn's already smoothed
with its session neighbours, see NEIGHBOUR_WEIGHTS; any other row's as stored), its sign
bits and its kind. The vector is kept as int8 with one float32 scale per row (the
largest component maps to 127): 445 bytes a 384-d row with its bits, rowid and kind, so
a million rows fit in the default 512 MB budget where float32 needed 1.6 GB. A row's
score is the cosine of the query (float32) with that int8 vector times its scale: off
the float32 cosine by at most about 0.002 (a 1/127 step per component, errors that
average out over 384 of them), a fixed function of the stored vectors, so a mirror
loaded a minute ago and one that has followed the store for days give the same scores
to the bit, and a namespace streamed from the table scores alike (docs/benchmarks.md,
"A million memories"). It follows the vec0 table through ``vector_state``: appends
load only the new rows, any other change reloads. The slices together stay under a
memory budget (``vector_mirror_mb``, least recently used leave first); a namespace
bigger than the whole budget is scored by streaming from the table instead.

Concurrency: only loading takes the lock. A slice publishes what readers may use as one
tuple (``view``), so scoring runs with no lock held, from any number of threads. A
reader may see one vector mid-update when a new turn re-smooths an older neighbour: one
score in one query slightly off, never a wrong row.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..core.validate import KINDS
from .embed import EmbeddingSpace

__all__ = ["NEIGHBOUR_WEIGHTS", "VectorMirror", "quantise", "sign_bits"]

# Free dense context for a turn: its vector plus a little of the turns around it in the
# session (no extra encoding). Measured on LOCOMO: docs/benchmarks.md.
NEIGHBOUR_WEIGHTS = {-1: 0.3, 1: 0.15}

_LOW_SAMPLE = 1024  # rows whose cosine sets a big slice's low end for min-max scaling
_CHUNK = 16_384  # rows converted to float32 at a time: bounds the scoring temporaries
_BLOCK = _CHUNK  # rows per block of a slice's vectors (Blocks)
_SIMILAR_CELLS = 2**22  # cosines computed at once by a near-duplicate check (16 MB)
_KIND_CODE = {kind: code for code, kind in enumerate(KINDS)}
_MIN_ROWS = 256  # first capacity of a slice; it grows by half
_TURN = 255  # kind code of a session turn (never a near-duplicate candidate)


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
    out: np.ndarray = np.einsum("ij,j->i", matrix, query)
    return out


def quantise(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row as int8 (its largest component at +-127) and the float32 scale that
    turns it back into the row; a zero row gets scale 0."""
    vectors = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(vectors).max(axis=1) if vectors.size else np.zeros(len(vectors), np.float32)
    scale = (peak / 127).astype(np.float32)
    safe = np.where(scale > 0, scale, 1).astype(np.float32)
    q = np.rint(vectors / safe[:, None]).clip(-127, 127).astype(np.int8)
    return q, scale


def _scored(q: np.ndarray, scale: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosines of int8 rows (with their scales) to a float32 query."""
    out: np.ndarray = _dot(q.astype(np.float32), query) * scale
    return out


def sign_bits(vectors: np.ndarray, words: int) -> np.ndarray:
    """Each row's signs packed into ``words`` uint64 (1 = positive)."""
    packed = np.packbits(vectors > 0, axis=1)
    padded = np.zeros((len(vectors), words * 8), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    return padded.view(np.uint64)


class Blocks(NamedTuple):
    """A slice's int8 vectors: full blocks of ``_BLOCK`` rows, then one that grows by half.

    Growing adds a block and copies at most the last one: one contiguous array grown by
    half held the old and the new copy at once, 2x the vectors at the peak (most of the
    peak RSS at 100k rows). Row ``i`` is ``blocks[i // _BLOCK][i % _BLOCK]``.
    """

    blocks: tuple[np.ndarray, ...]

    @property
    def nbytes(self) -> int:
        return sum(b.nbytes for b in self.blocks)

    @property
    def capacity(self) -> int:
        return (len(self.blocks) - 1) * _BLOCK + len(self.blocks[-1]) if self.blocks else 0

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Rows [start, stop): a view when they sit in one block, else a copy."""
        first, last = start // _BLOCK, max(start, stop - 1) // _BLOCK
        if first == last:
            return self.blocks[first][start - first * _BLOCK : stop - first * _BLOCK]
        return np.concatenate([self.blocks[b][max(start - b * _BLOCK, 0):
                                              min(stop - b * _BLOCK, _BLOCK)]
                               for b in range(first, last + 1)])

    def dots_at(self, index: np.ndarray, scale: np.ndarray, query: np.ndarray) -> np.ndarray:
        """The rows at ``index`` (ascending) dotted with ``query``, block by block."""
        if len(self.blocks) == 1:
            return _scored(self.blocks[0][index], scale[index], query)
        cuts = np.searchsorted(index, np.arange(1, len(self.blocks)) * _BLOCK).tolist()
        parts: list[np.ndarray] = []
        lo = 0
        for b, hi in enumerate([*cuts, len(index)]):
            if hi > lo:
                at = index[lo:hi]
                parts.append(_scored(self.blocks[b][at - b * _BLOCK], scale[at], query))
            lo = hi
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)

    def put(self, start: int, values: np.ndarray) -> None:
        """Write ``values`` into the rows from ``start`` on (within capacity)."""
        done = 0
        while done < len(values):
            b, offset = divmod(start + done, _BLOCK)
            count = min(len(values) - done, _BLOCK - offset)
            self.blocks[b][offset : offset + count] = values[done : done + count]
            done += count

    def dots(self, size: int, scale: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Rows [0, size) dotted with ``query``."""
        parts = [_scored(self.blocks[b][: min(_BLOCK, size - b * _BLOCK)],
                         scale[b * _BLOCK : min(size, (b + 1) * _BLOCK)], query)
                 for b in range((size + _BLOCK - 1) // _BLOCK)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def grown(self, need: int, dim: int) -> Blocks:
        """Room for ``need`` rows, sharing every full block and copying at most the last."""
        blocks = list(self.blocks)
        while need > (room := Blocks(tuple(blocks)).capacity):
            last = blocks[-1] if blocks else None
            if last is not None and len(last) < _BLOCK:  # the growing one: by half
                size = min(_BLOCK, max(need - room + len(last), len(last) + len(last) // 2))
                bigger = np.zeros((size, dim), np.int8)
                bigger[: len(last)] = last
                blocks[-1] = bigger
            else:
                blocks.append(np.zeros((min(_BLOCK, max(need - room, _MIN_ROWS)), dim),
                                       np.int8))
        return Blocks(tuple(blocks))


class View(NamedTuple):
    """What a reader of a slice may use, published as one object: rows [:size]."""

    size: int
    rowids: np.ndarray
    vectors: Blocks
    scales: np.ndarray
    bits: np.ndarray
    kinds: np.ndarray


class _Slice:
    def __init__(self, dim: int, epoch: int = -1) -> None:
        self.dim = dim
        self.epoch = epoch
        self.max_rowid = 0
        self.words = (dim + 63) // 64
        # Column-major sign bits: a big slice's first pass runs over long rows.
        self.view = View(0, np.zeros(0, np.int64), Blocks(()), np.zeros(0, np.float32),
                         np.zeros((self.words, 0), np.uint64), np.zeros(0, np.uint8))
        self.slot: dict[tuple[str, int], int] = {}  # (session, position) -> row index
        self.key_of: dict[int, tuple[str, int]] = {}

    @property
    def nbytes(self) -> int:
        v = self.view
        return (v.rowids.nbytes + v.vectors.nbytes + v.scales.nbytes + v.bits.nbytes
                + v.kinds.nbytes)

    @staticmethod
    def bytes_per_row(dim: int) -> int:
        return 8 + dim + 4 + 8 * ((dim + 63) // 64) + 1

    def _grown(self, extra: int) -> View:
        v = self.view
        need = v.size + extra
        vectors = v.vectors if need <= v.vectors.capacity else v.vectors.grown(need, self.dim)
        if need <= len(v.rowids):
            return v._replace(vectors=vectors)
        capacity = max(need, len(v.rowids) + len(v.rowids) // 2, _MIN_ROWS)
        rowids = np.zeros(capacity, np.int64)
        rowids[: v.size] = v.rowids[: v.size]
        scales = np.zeros(capacity, np.float32)
        scales[: v.size] = v.scales[: v.size]
        bits = np.zeros((self.words, capacity), np.uint64)
        bits[:, : v.size] = v.bits[:, : v.size]
        kinds = np.zeros(capacity, np.uint8)
        kinds[: v.size] = v.kinds[: v.size]
        return View(v.size, rowids, vectors, scales, bits, kinds)

    def append(self, rows: Sequence[tuple[Any, ...]], raw_of: Any) -> None:
        """Add (rowid, blob, session_id, position, kind) rows, rowid ascending.
        ``raw_of(rowids)`` reads stored vectors of older rows a new turn re-smooths."""
        v = self._grown(len(rows))
        start, end = v.size, v.size + len(rows)
        raw = np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), -1)
        v.rowids[start:end] = [r[0] for r in rows]
        q, scale = quantise(raw)
        v.vectors.put(start, q)
        v.scales[start:end] = scale
        v.kinds[start:end] = [_TURN if r[2] is not None and r[3] is not None
                              else _KIND_CODE.get(str(r[4]), _TURN) for r in rows]
        raws = {int(r[0]): raw[i] for i, r in enumerate(rows)}
        touched: set[int] = set()
        for offset, r in enumerate(rows):
            if r[2] is None or r[3] is None:
                continue
            session, position = str(r[2]), int(r[3])
            self.slot[(session, position)] = start + offset
            self.key_of[start + offset] = (session, position)
            touched.add(start + offset)
            for delta in NEIGHBOUR_WEIGHTS:
                near = self.slot.get((session, position - delta))
                if near is not None:
                    touched.add(near)
        if touched:
            self._smooth(v, touched, raws, raw_of)
        # The bits come from the int8 rows, so they too follow from what is kept.
        v.bits[:, start:end] = sign_bits(v.vectors.rows(start, end), self.words).T
        for index in touched:
            if index < start:
                v.bits[:, index] = sign_bits(v.vectors.rows(index, index + 1), self.words)[0]
        self.view = View(end, v.rowids, v.vectors, v.scales, v.bits, v.kinds)

    def _smooth(self, v: View, touched: set[int], raws: dict[int, Any], raw_of: Any) -> None:
        plans: dict[int, list[tuple[float, int]]] = {}
        for index in touched:
            session, position = self.key_of[index]
            terms = [(1.0, int(v.rowids[index]))]
            for delta, weight in NEIGHBOUR_WEIGHTS.items():
                near = self.slot.get((session, position + delta))
                if near is not None:
                    terms.append((weight, int(v.rowids[near])))
            plans[index] = terms
        wanted = {rowid for terms in plans.values() for _, rowid in terms} - set(raws)
        if wanted:
            raws.update(raw_of(sorted(wanted)))
        for index, terms in plans.items():
            vector = sum(weight * raws[rowid] for weight, rowid in terms)
            norm = float(np.linalg.norm(vector))
            q, scale = quantise((vector / norm if norm else vector)[None, :])
            v.vectors.put(index, q)
            v.scales[index] = scale[0]

    def search(
        self, query: np.ndarray, qbits: np.ndarray, must: np.ndarray, shortlist: int | None
    ) -> tuple[np.ndarray, np.ndarray, float, float]:
        """(rowids, cosines, low, high) for this slice's rows (int8 rows: see the module).

        Small slice, or ``shortlist`` None: every row. Big slice: every row is
        ranked by the Hamming distance of its sign bits to the query's (4.8 MB at 100k
        rows instead of the vectors), and the best ``shortlist`` of them plus the
        ``must`` rowids are scored. ``low`` then comes from a fixed sample of
        rows, ``high`` from the shortlist (the best row is in it).
        """
        v = self.view  # one read: a concurrent append publishes a new view
        n = v.size
        if shortlist is None or n <= shortlist:
            scores = v.vectors.dots(n, v.scales, query)
            if not n:
                return v.rowids[:0], scores, 0.0, 0.0
            return v.rowids[:n], scores, float(scores.min()), float(scores.max())
        distance = np.bitwise_count(v.bits[0, :n] ^ qbits[0]).astype(np.int16)
        for word in range(1, self.words):
            distance += np.bitwise_count(v.bits[word, :n] ^ qbits[word])
        picked = _closest(distance, shortlist)
        if len(must):
            at = np.minimum(np.searchsorted(v.rowids[:n], must), n - 1)
            picked = np.union1d(picked, at[v.rowids[at] == must])
        else:
            picked.sort()
        scores = v.vectors.dots_at(picked, v.scales, query)
        sample = v.vectors.dots_at(np.arange(0, n, max(1, n // _LOW_SAMPLE)), v.scales, query)
        low = float(min(sample.min(), scores.min()))
        return v.rowids[picked], scores, low, float(scores.max())

    def kind_rows(self, kinds: Sequence[str], start: int, stop: int) -> np.ndarray:
        """Indices in [start, stop) of the rows whose kind is one of ``kinds``."""
        codes = np.array([_KIND_CODE[k] for k in kinds if k in _KIND_CODE], np.uint8)
        return start + np.flatnonzero(np.isin(self.view.kinds[start:stop], codes))

    def scores_at(self, index: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Cosines of the rows at ``index`` (ascending) to one query (int8 rows, as
        ``similar`` scores them; the sum's order may move the last float bit)."""
        v = self.view
        return v.vectors.dots_at(index, v.scales, query)

    def similar(
        self, queries: np.ndarray, threshold: float, below: int, kinds: Sequence[str]
    ) -> list[tuple[int, int, float]]:
        """(query index, rowid, cosine >= threshold) over rows below ``below`` whose kind
        is one of ``kinds`` (turns never), a chunk of rows at a time: a chunk's cosines
        to the whole batch stay under ``_SIMILAR_CELLS`` (1,000 new rows against 16k
        rows at once were a 65 MB temporary on every batched write)."""
        v = self.view
        n = int(np.searchsorted(v.rowids[: v.size], below))
        codes = np.array([_KIND_CODE[k] for k in kinds if k in _KIND_CODE], np.uint8)
        out: list[tuple[int, int, float]] = []
        step = max(256, min(_CHUNK, _SIMILAR_CELLS // max(1, len(queries))))
        for start in range(0, n, step):
            stop = min(start + step, n)
            keep = np.flatnonzero(np.isin(v.kinds[start:stop], codes))
            if not len(keep):
                continue
            rows_of = v.vectors.rows(start, stop)
            scale = v.scales[start:stop]
            if len(keep) != stop - start:
                rows_of, scale = rows_of[keep], scale[keep]
            block = (rows_of.astype(np.float32) @ queries.T) * scale[:, None]
            rows, cols = np.nonzero(block >= threshold)
            out.extend((int(c), int(v.rowids[start + keep[r]]), float(block[r, c]))
                       for r, c in zip(rows.tolist(), cols.tolist(), strict=True))
        return out


class VectorMirror:
    """The per-process mirror of each (space, namespace)'s vectors, refreshed on demand."""

    def __init__(self, budget_bytes: int = 512 * 2**20) -> None:
        self.budget_bytes = budget_bytes
        self._slices: OrderedDict[tuple[str, str], _Slice] = OrderedDict()
        self._lock = threading.Lock()  # loading only; scoring never takes it
        # Called as each slice's scoring starts, with no lock held (tracing; the test
        # that four threads are inside scoring at once).
        self.on_scoring: Callable[[], None] | None = None

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for s in list(self._slices.values()))

    def _state(self, conn: Any, key: tuple[str, str]) -> tuple[int, int] | None:
        state = conn.execute(
            "SELECT max_rowid, epoch FROM vector_state WHERE space = ? AND namespace = ?", key
        ).fetchone()
        return None if state is None else (int(state[0]), int(state[1]))

    def cached(self, space_key: str, namespace: str) -> _Slice | None:
        """The slice as last loaded, not refreshed (inside a write transaction, whose
        uncommitted rows must never enter the mirror)."""
        return self._slices.get((space_key, namespace))

    def slice(
        self, conn: Any, space: EmbeddingSpace, table: str, namespace: str
    ) -> _Slice | None:
        """The namespace's fresh slice as of ``conn``'s snapshot (which must hold only
        committed rows), or None when it would not fit in the budget."""
        key = (space.key, namespace)
        state = self._state(conn, key)
        cached = self._slices.get(key)
        if cached is not None and state is not None and state == (cached.max_rowid,
                                                                   cached.epoch):
            return cached  # the common case: no lock at all
        with self._lock:
            return self._load(conn, space, table, namespace, state)

    def _load(
        self, conn: Any, space: EmbeddingSpace, table: str, namespace: str,
        state: tuple[int, int] | None,
    ) -> _Slice | None:
        key = (space.key, namespace)
        cached = self._slices.get(key)
        if state is None:
            fresh = _Slice(space.dim, epoch=0)
            self._slices[key] = fresh
            return fresh
        max_rowid, epoch = state
        if cached is not None and (max_rowid, epoch) == (cached.max_rowid, cached.epoch):
            return cached  # another thread loaded it meanwhile
        if cached is None or epoch != cached.epoch:
            rows = int(conn.execute("SELECT count(*) FROM memories WHERE namespace = ?",
                                    (namespace,)).fetchone()[0])
            if rows * _Slice.bytes_per_row(space.dim) > self.budget_bytes:
                self._slices.pop(key, None)
                return None
            cached = _Slice(space.dim, epoch=epoch)
        if cached.view.size:
            # Appends: walk the rows written since (a rowid range of the rows table; the
            # namespace only filters) and look their vectors up. vec0 does not narrow a
            # scan by rowid: the same query driven from it read the whole partition for
            # every refresh (1.8 s for 100 new rows at 30k, loaded machine). `|| ''` keeps
            # SQLite off the namespace index (the rowid range drives) and runs on PostgreSQL.
            cursor = conn.execute(
                f"SELECT m.rowid, v.embedding, m.session_id, m.position, m.kind FROM memories m "
                f"JOIN {table} v ON v.rowid = m.rowid "
                "WHERE m.rowid > ? AND m.namespace || '' = ? ORDER BY m.rowid",
                (cached.max_rowid, namespace),
            )
            while batch := cursor.fetchmany(_CHUNK):
                cached.append(batch, lambda ids: _raw(conn, table, ids))
        else:
            cached = self._cold(conn, table, namespace, cached, ordered=False) or self._cold(
                conn, table, namespace, _Slice(space.dim, epoch=epoch), ordered=True)
            assert cached is not None
        cached.max_rowid = max(max_rowid, cached.max_rowid)
        size = cached.view.size
        if size * _Slice.bytes_per_row(space.dim) > self.budget_bytes:
            self._slices.pop(key, None)  # grew past the budget: streamed from now on
            return None
        self._slices[key] = cached
        self._slices.move_to_end(key)
        self._evict(keep=key)
        return cached

    @staticmethod
    def _cold(
        conn: Any, table: str, namespace: str, fresh: _Slice, *, ordered: bool
    ) -> _Slice | None:
        """Load a whole partition into ``fresh``, a chunk at a time (never every blob).

        Unordered first: an ORDER BY made SQLite sort every blob in a temporary b-tree
        in memory (+460 MB RSS at 300k rows, and slower: 73 s against 48 s, loaded
        machine), while vec0 returns a partition in insertion order, which is rowid
        order unless a row's vector was replaced. A row out of order: None, and the
        caller loads again ordered."""
        cursor = conn.execute(
            f"SELECT v.rowid, v.embedding, m.session_id, m.position, m.kind FROM {table} v "
            "JOIN memories m ON m.rowid = v.rowid WHERE v.namespace = ?"
            + (" ORDER BY v.rowid" if ordered else ""),
            (namespace,),
        )
        last = 0
        while batch := cursor.fetchmany(_CHUNK):
            rowids = np.fromiter((r[0] for r in batch), np.int64, len(batch))
            if rowids[0] <= last or (len(rowids) > 1 and bool((np.diff(rowids) <= 0).any())):
                assert not ordered
                return None
            last = int(rowids[-1])
            fresh.append(batch, lambda ids: _raw(conn, table, ids))
        return fresh

    def _evict(self, keep: tuple[str, str]) -> None:
        while self.nbytes > self.budget_bytes and len(self._slices) > 1:
            oldest = next(k for k in self._slices if k != keep)
            del self._slices[oldest]

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
        """Rowids (ascending), their cosines to ``query``, and the low and high
        cosine over the namespaces: every row of a namespace up to ``exact_up_to`` rows
        (None: any size), else its ``shortlist`` plus ``must`` (see _Slice.search)."""
        must = np.zeros(0, dtype=np.int64) if must is None else np.sort(must)
        query = np.asarray(query, dtype=np.float32)
        qbits = sign_bits(query[None, :], (len(query) + 63) // 64)[0]
        parts = []
        for namespace in namespaces:
            found = self.slice(conn, space, table, namespace)
            if found is None:
                parts.append(_streamed(conn, table, namespace, query))
            elif found.view.size:
                size = found.view.size
                if self.on_scoring is not None:
                    self.on_scoring()
                parts.append(found.search(
                    query, qbits, must,
                    None if exact_up_to is None or size <= exact_up_to else shortlist))
        parts = [p for p in parts if len(p[0])]
        if not parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32), 0.0, 0.0
        low, high = min(p[2] for p in parts), max(p[3] for p in parts)
        if len(parts) == 1:
            return parts[0][0], parts[0][1], low, high
        rowids = np.concatenate([p[0] for p in parts])
        order = np.argsort(rowids, kind="stable")
        return rowids[order], np.concatenate([p[1] for p in parts])[order], low, high


def _raw(conn: Any, table: str, rowids: Sequence[int]) -> dict[int, np.ndarray]:
    out: dict[int, np.ndarray] = {}
    for start in range(0, len(rowids), 500):
        chunk = list(rowids[start : start + 500])
        for rowid, blob in conn.execute(
            f"SELECT rowid, embedding FROM {table} WHERE rowid IN "
            f"({','.join('?' * len(chunk))})", chunk,
        ):
            out[int(rowid)] = np.frombuffer(blob, np.float32)
    return out


def _streamed(
    conn: Any, table: str, namespace: str, query: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Every row's cosine, read from the table a chunk at a time and quantised as the
    mirror would (over budget: no mirror, no neighbour smoothing)."""
    ids: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    cursor = conn.execute(f"SELECT rowid, embedding FROM {table} WHERE namespace = ?",
                          (namespace,))
    while batch := cursor.fetchmany(_CHUNK):
        ids.append(np.fromiter((r[0] for r in batch), np.int64, len(batch)))
        matrix = np.frombuffer(b"".join(r[1] for r in batch), np.float32)
        scores.append(_scored(*quantise(matrix.reshape(len(batch), -1)), query))
    if not ids:
        return np.zeros(0, np.int64), np.zeros(0, np.float32), 0.0, 0.0
    rowids, values = np.concatenate(ids), np.concatenate(scores)
    order = np.argsort(rowids)
    return rowids[order], values[order], float(values.min()), float(values.max())
