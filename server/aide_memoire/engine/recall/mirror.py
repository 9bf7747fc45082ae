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

import contextlib
import mmap
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np

from ...logs import get_logger
from ..storage.protocol import Connection, Database
from ..storage.repositories import BlockReader
from ..storage.repositories import MirrorReads as VectorReads
from ..storage.vector_codec import TURN, Packed, kind_code, quantise, sign_bits
from .embed import EmbeddingSpace

__all__ = ["NEIGHBOUR_WEIGHTS", "VectorMirror", "VectorReads", "quantise", "sign_bits"]

log = get_logger(__name__)

# Free dense context for a turn: its vector plus a little of the turns around it in the
# session (no extra encoding). Measured on LOCOMO: docs/benchmarks.md.
NEIGHBOUR_WEIGHTS = {-1: 0.3, 1: 0.15}

_LOW_SAMPLE = 1024  # rows whose cosine sets a big slice's low end for min-max scaling
_CHUNK = 16_384  # rows converted to float32 at a time: bounds the scoring temporaries
_BLOCK = _CHUNK  # rows per block of a slice's vectors (Blocks)
_SIMILAR_CELLS = 2**22  # cosines computed at once by a near-duplicate check (16 MB)
_MIN_ROWS = 256  # first capacity of a slice; it grows by half
_TURN = TURN  # kind code of a session turn (never a near-duplicate candidate)
# From this many rows the sign-bit pass runs in two halves at once (numpy leaves the GIL):
# 14 ms of CPU at 1M rows in one thread, the part of a recall that grows with the store.
_SPLIT_ROWS = 262_144
# From this size an array of a slice gets a mapping of its own, advised to use huge pages
# (Linux): filling a million rows' arrays (430 MB) page by page cost 0.55 s of CPU in
# first-touch faults of 4 kB pages, most of a start-up's load (docs/benchmarks.md,
# issue 28 round 9).
_HUGE_BYTES = 4 * 2**20
_HALVES: ThreadPoolExecutor | None = None
_HALVES_LOCK = threading.Lock()


def _halves() -> ThreadPoolExecutor:
    global _HALVES
    with _HALVES_LOCK:
        if _HALVES is None:
            _HALVES = ThreadPoolExecutor(max_workers=2, thread_name_prefix="mirror-bits")
        return _HALVES


def _zeros(shape: int | tuple[int, ...], dtype: type[np.generic]) -> np.ndarray:
    """A zeroed array: ``np.zeros``, or from ``_HUGE_BYTES`` on an anonymous mapping of
    its own, advised to use huge pages where the system has them (zeroed by the kernel,
    unmapped when the array goes; where the advice is refused, plain pages)."""
    count = int(np.prod(shape))
    size = count * np.dtype(dtype).itemsize
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if size < _HUGE_BYTES or advice is None:
        return np.zeros(shape, dtype)
    mapped = mmap.mmap(-1, size)
    with contextlib.suppress(OSError):  # no transparent huge pages: plain pages, zeroed
        mapped.madvise(advice)
    return np.frombuffer(mapped, dtype, count).reshape(shape)


def _hamming(bits: np.ndarray, qbits: np.ndarray, start: int, stop: int, out: np.ndarray
             ) -> None:
    """Hamming distances of rows [start, stop) to the query's bits, into ``out``."""
    np.copyto(out, np.bitwise_count(bits[0, start:stop] ^ qbits[0]), casting="unsafe")
    for word in range(1, len(qbits)):
        out += np.bitwise_count(bits[word, start:stop] ^ qbits[word])


def _distances(bits: np.ndarray, qbits: np.ndarray, n: int) -> np.ndarray:
    """Every row's Hamming distance to the query (int16); a big slice's two halves at
    once, the same numbers either way."""
    distance = np.empty(n, np.int16)
    if n < _SPLIT_ROWS:
        _hamming(bits, qbits, 0, n, distance)
        return distance
    half = n // 2
    first = _halves().submit(_hamming, bits, qbits, 0, half, distance[:half])
    _hamming(bits, qbits, half, n, distance[half:])
    first.result()
    return distance


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


def _scored(q: np.ndarray, scale: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosines of int8 rows (with their scales) to a float32 query."""
    out: np.ndarray = _dot(q.astype(np.float32), query) * scale
    return out


def _dequantised(q: np.ndarray, scale: np.ndarray) -> np.ndarray:
    out: np.ndarray = q.astype(np.float32) * scale[:, None]
    return out


def _smoothed(own: np.ndarray, before: np.ndarray, after: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Turns' int8 rows from their own stored rows and their neighbours' (zero rows where
    a turn has none), all dequantised: every path that smooths calls this, on the same
    inputs, so a slice gets the same bytes however it was filled."""
    vector = own + np.float32(NEIGHBOUR_WEIGHTS[-1]) * before \
        + np.float32(NEIGHBOUR_WEIGHTS[1]) * after
    norm = np.sqrt((vector * vector).sum(axis=1))
    return quantise(vector / np.where(norm > 0, norm, 1).astype(np.float32)[:, None])


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

    def take(self, index: np.ndarray) -> np.ndarray:
        """The int8 rows at ``index`` (any order)."""
        out = np.empty((len(index), self.blocks[0].shape[1] if self.blocks else 0), np.int8)
        which = index // _BLOCK
        for b in np.unique(which).tolist():
            at = np.flatnonzero(which == b)
            out[at] = self.blocks[b][index[at] - b * _BLOCK]
        return out

    def put_at(self, index: np.ndarray, values: np.ndarray) -> None:
        """Write ``values`` into the rows at ``index`` (any order)."""
        which = index // _BLOCK
        for b in np.unique(which).tolist():
            at = np.flatnonzero(which == b)
            self.blocks[b][index[at] - b * _BLOCK] = values[at]

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
                bigger = _zeros((size, dim), np.int8)
                bigger[: len(last)] = last
                blocks[-1] = bigger
            else:
                blocks.append(_zeros((min(_BLOCK, max(need - room, _MIN_ROWS)), dim),
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
    """One (space, namespace)'s rows, rowid ascending. A turn's row is smoothed with its
    session neighbours; no per-turn table is kept (a new turn finds its neighbours with
    one indexed query per session of the batch)."""

    def __init__(self, dim: int, epoch: int = -1) -> None:
        self.dim = dim
        self.epoch = epoch
        self.max_rowid = 0
        self.words = (dim + 63) // 64
        # Column-major sign bits: a big slice's first pass runs over long rows.
        self.view = View(0, np.zeros(0, np.int64), Blocks(()), np.zeros(0, np.float32),
                         np.zeros((self.words, 0), np.uint64), np.zeros(0, np.uint8))

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
        rowids = _zeros(capacity, np.int64)
        rowids[: v.size] = v.rowids[: v.size]
        scales = _zeros(capacity, np.float32)
        scales[: v.size] = v.scales[: v.size]
        bits = _zeros((self.words, capacity), np.uint64)
        bits[:, : v.size] = v.bits[:, : v.size]
        kinds = _zeros(capacity, np.uint8)
        kinds[: v.size] = v.kinds[: v.size]
        return View(v.size, rowids, vectors, scales, bits, kinds)

    def _put(self, v: View, start: int, block: Packed) -> None:
        end = start + len(block)
        v.rowids[start:end] = block.rowids
        v.vectors.put(start, block.vectors)
        v.scales[start:end] = block.scales
        v.kinds[start:end] = block.kinds
        v.bits[:, start:end] = block.bits.T

    def fill(self, total: int, listing: Sequence[tuple[int, int]],
             block: Callable[[int], Packed]) -> None:
        """Load stored int8 blocks (raw rows; :meth:`smooth_turns` follows), sized once."""
        v = self._grown(total)
        at = v.size
        for seq, _ in listing:
            rows = block(seq)
            self._put(v, at, rows)
            at += len(rows)
        self.view = View(at, v.rowids, v.vectors, v.scales, v.bits, v.kinds)
        if at > 1 and bool((np.diff(v.rowids[:at]) <= 0).any()):
            self._sort()

    def _sort(self) -> None:
        """Rows back in rowid order (a replaced vector's new copy sits in a later block)."""
        v = self.view
        order = np.argsort(v.rowids[: v.size], kind="stable")
        fresh = _Slice(self.dim)
        w = fresh._grown(v.size)
        for start in range(0, v.size, _CHUNK):
            at = order[start : start + _CHUNK]
            q = v.vectors.take(at)
            self._put(w, start, Packed(v.rowids[at], v.scales[at], v.kinds[at],
                                       v.bits[:, at].T, q))
        self.view = View(v.size, w.rowids, w.vectors, w.scales, w.bits, w.kinds)

    def add_raw(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Add (rowid, blob, session_id, position, kind) rows as stored, rowid ascending,
        unsmoothed (a cold load: :meth:`smooth_turns` follows)."""
        rowids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        raw = np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), -1)
        q, scale = quantise(raw)
        kinds = np.fromiter((kind_code(str(r[4]), r[2] is not None and r[3] is not None)
                             for r in rows), np.uint8, len(rows))
        v = self._grown(len(rows))
        self._put(v, v.size, Packed(rowids, scale, kinds, sign_bits(q, self.words), q))
        self.view = View(v.size + len(rows), v.rowids, v.vectors, v.scales, v.bits, v.kinds)

    def _index_of(self, rowids: np.ndarray) -> np.ndarray:
        """Row indices of ``rowids`` (-1 where the slice has no such row)."""
        v = self.view
        n = v.size
        if not n:
            return np.full(len(rowids), -1, np.int64)
        at = np.minimum(np.searchsorted(v.rowids[:n], rowids), n - 1)
        return np.where(v.rowids[at] == rowids, at, -1)

    def smooth_turns(self, keys: Sequence[tuple[int, str, int]]) -> None:
        """Smooth every turn of a freshly loaded slice (``keys``: (rowid, session,
        position) by session and position), a chunk at a time from the stored rows: a
        chunk's results are written after the next chunk has read its neighbours."""
        if not keys:
            return
        index = self._index_of(np.fromiter((k[0] for k in keys), np.int64, len(keys)))
        sessions = np.array([k[1] for k in keys], dtype=object)
        positions = np.fromiter((k[2] for k in keys), np.int64, len(keys))
        keep = index >= 0
        index, sessions, positions = index[keep], sessions[keep], positions[keep]
        follows = np.r_[False, (sessions[1:] == sessions[:-1])
                        & (positions[1:] - positions[:-1] == 1)]
        before = np.where(follows, np.r_[-1, index[:-1]], -1)
        after = np.where(np.r_[follows[1:], False], np.r_[index[1:], -1], -1)
        pending: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        for start in range(0, len(index), _CHUNK):
            own = index[start : start + _CHUNK]
            result = self._smooth(own, before[start : start + _CHUNK],
                                  after[start : start + _CHUNK], self._stored)
            if pending is not None:
                self._write_smoothed(*pending)
            pending = (own, *result)
        if pending is not None:
            self._write_smoothed(*pending)

    def _stored(self, index: np.ndarray) -> np.ndarray:
        v = self.view
        return _dequantised(v.vectors.take(index), v.scales[index])

    @staticmethod
    def _smooth(own: np.ndarray, before: np.ndarray, after: np.ndarray,
                rows_of: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Smoothed int8 rows for the rows at ``own``; ``before``/``after`` hold each
        one's neighbour (-1: none); ``rows_of`` gives stored rows, dequantised."""
        wanted = np.unique(np.concatenate([own, before[before >= 0], after[after >= 0]]))
        stored = rows_of(wanted)

        def of(index: np.ndarray) -> np.ndarray:
            out = np.zeros((len(index), stored.shape[1]), np.float32)
            present = index >= 0
            out[present] = stored[np.searchsorted(wanted, index[present])]
            return out

        return _smoothed(of(own), of(before), of(after))

    def _write_smoothed(self, index: np.ndarray, q: np.ndarray, scale: np.ndarray) -> None:
        v = self.view
        v.vectors.put_at(index, q)
        v.scales[index] = scale
        v.bits[:, index] = sign_bits(q, self.words).T

    def append(self, rows: Sequence[tuple[Any, ...]],
               neighbours: Callable[[str, int, int], list[tuple[int, int]]] | None = None,
               raw_of: Callable[[list[int]], dict[int, np.ndarray]] | None = None) -> None:
        """Add (rowid, blob, session_id, position, kind) rows, rowid ascending, and
        re-smooth the turns they touch (theirs and the older ones next to them).
        ``neighbours(session, low, high)`` lists a session's (rowid, position) in that
        range, ``raw_of(rowids)`` the stored vectors of older rows (without them, as in
        benches of notes only, turns stay unsmoothed)."""
        start = self.view.size
        self.add_raw(rows)
        if neighbours is None or raw_of is None:
            return
        turns: dict[str, list[int]] = {}
        for r in rows:
            if r[2] is not None and r[3] is not None:
                turns.setdefault(str(r[2]), []).append(int(r[3]))
        if not turns:
            return
        own: list[int] = []
        before: list[int] = []
        after: list[int] = []
        for session, new in turns.items():
            # Positions within two of a new turn: the touched turns and their neighbours.
            found = neighbours(session, min(new) - 2, max(new) + 2)
            rowids = np.array([r for r, _ in found], np.int64)
            at_of = dict(zip([p for _, p in found],
                             self._index_of(rowids).tolist() if len(found) else [],
                             strict=True))
            touched = {p + d for p in new for d in (0, -1, 1)}
            for position in sorted(touched):
                index = at_of.get(position, -1)
                if index < 0:
                    continue
                own.append(index)
                before.append(at_of.get(position - 1, -1))
                after.append(at_of.get(position + 1, -1))
        if not own:
            return
        v = self.view

        def rows_of(index: np.ndarray) -> np.ndarray:
            # Stored rows as they are in a block: quantised from the stored float32.
            # New rows are still raw in the slice; older turns are smoothed there, so
            # they are read again from the store.
            out = np.empty((len(index), self.dim), np.float32)
            old = [i for i in index.tolist() if i < start]
            raw = raw_of([int(v.rowids[i]) for i in old]) if old else {}
            for k, i in enumerate(index.tolist()):
                if i >= start:
                    out[k] = _dequantised(v.vectors.rows(i, i + 1), v.scales[i : i + 1])[0]
                else:
                    q, scale = quantise(raw[int(v.rowids[i])][None, :])
                    out[k] = _dequantised(q, scale)[0]
            return out

        index = np.array(own, np.int64)
        q, scale = self._smooth(index, np.array(before, np.int64), np.array(after, np.int64),
                                rows_of)
        self._write_smoothed(index, q, scale)

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
        picked = _closest(_distances(v.bits, qbits, n), shortlist)
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
        codes = np.array([c for c in (kind_code(k, False) for k in kinds) if c != _TURN], np.uint8)
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
        codes = np.array([c for c in (kind_code(k, False) for k in kinds) if c != _TURN], np.uint8)
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
    """The per-process mirror of each (space, namespace)'s vectors, refreshed on demand.

    A slice starts from the store's int8 blocks when they are whole (one sequential
    read), else from the vector table; then the blocks are rebuilt in the background
    (``db``, when given, is the store they are rebuilt in)."""

    def __init__(self, reads: VectorReads, budget_bytes: int = 512 * 2**20,
                 db: Database | None = None) -> None:
        self.budget_bytes = budget_bytes
        self.reads = reads
        self.db = db
        self._slices: OrderedDict[tuple[str, str], _Slice] = OrderedDict()
        self._lock = threading.Lock()  # loading only; scoring never takes it
        self._building: dict[tuple[str, str], threading.Thread] = {}
        # Called as each slice's scoring starts, with no lock held (tracing; the test
        # that four threads are inside scoring at once).
        self.on_scoring: Callable[[], None] | None = None

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for s in list(self._slices.values()))

    def cached(self, space_key: str, namespace: str) -> _Slice | None:
        """The slice as last loaded, not refreshed (inside a write transaction, whose
        uncommitted rows must never enter the mirror)."""
        return self._slices.get((space_key, namespace))

    def slice(
        self, conn: Connection, space: EmbeddingSpace, table: str, namespace: str
    ) -> _Slice | None:
        """The namespace's fresh slice as of ``conn``'s snapshot (which must hold only
        committed rows), or None when it would not fit in the budget."""
        key = (space.key, namespace)
        state = self.reads.mirror_state(conn, space.key, namespace)
        cached = self._slices.get(key)
        if cached is not None and state is not None and state == (cached.max_rowid,
                                                                   cached.epoch):
            return cached  # the common case: no lock at all
        with self._lock:
            return self._load(conn, space, table, namespace, state)

    def _load(
        self, conn: Connection, space: EmbeddingSpace, table: str, namespace: str,
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
        reader = None
        if cached is None or epoch != cached.epoch:
            # The blocks know their size: no count of the rows (0.5 s at 500k, loaded).
            reader = self.reads.block_reader(conn, space, namespace, state)
            rows = reader[0] if reader is not None else self.reads.namespace_rows(
                conn, namespace)
            if rows * _Slice.bytes_per_row(space.dim) > self.budget_bytes:
                self._slices.pop(key, None)
                return None
            cached = _Slice(space.dim, epoch=epoch)
        if cached.view.size:
            cursor = self.reads.appended(conn, table, namespace, cached.max_rowid)
            while batch := cursor.fetchmany(_CHUNK):
                cached.append(
                    batch,
                    lambda session, low, high: self.reads.session_rows(
                        conn, namespace, session, low, high),
                    lambda ids: self.reads.raw_vectors(conn, table, ids))
        else:
            cached = self._fresh(conn, space, table, namespace, state, reader)
        cached.max_rowid = max(max_rowid, cached.max_rowid)
        size = cached.view.size
        if size * _Slice.bytes_per_row(space.dim) > self.budget_bytes:
            self._slices.pop(key, None)  # grew past the budget: streamed from now on
            return None
        self._slices[key] = cached
        self._slices.move_to_end(key)
        self._evict(keep=key)
        return cached

    def _fresh(self, conn: Connection, space: EmbeddingSpace, table: str, namespace: str,
               state: tuple[int, int], reader: BlockReader | None) -> _Slice:
        """A whole slice: from the blocks when they are whole, else from the table (and
        the blocks rebuilt in the background); then its turns smoothed."""
        fresh = _Slice(space.dim, epoch=state[1])
        if reader is None:
            reader = self.reads.block_reader(conn, space, namespace, state)
        if reader is not None:
            fresh.fill(*reader)
        else:
            loaded = self._cold(conn, table, namespace, fresh, ordered=False) or self._cold(
                conn, table, namespace, _Slice(space.dim, epoch=state[1]), ordered=True)
            assert loaded is not None
            fresh = loaded
            if self.reads.blocks_need_build(conn, space, namespace, state):
                self._rebuild(space, namespace)
        fresh.smooth_turns(self.reads.turn_keys(conn, namespace))
        return fresh

    def _cold(
        self, conn: Connection, table: str, namespace: str, fresh: _Slice, *, ordered: bool
    ) -> _Slice | None:
        """Load a whole partition from the table into ``fresh``, a chunk at a time.

        Unordered first (see ``appended``'s reads): the table returns a partition in
        insertion order, which is rowid order unless a row's vector was replaced. A row
        out of order: None, and the caller loads again ordered."""
        cursor = self.reads.partition(conn, table, namespace, ordered=ordered)
        last = 0
        while batch := cursor.fetchmany(_CHUNK):
            rowids = np.fromiter((r[0] for r in batch), np.int64, len(batch))
            if rowids[0] <= last or (len(rowids) > 1 and bool((np.diff(rowids) <= 0).any())):
                assert not ordered
                return None
            last = int(rowids[-1])
            fresh.add_raw(batch)
        return fresh

    def _rebuild(self, space: EmbeddingSpace, namespace: str) -> None:
        """Rebuild a namespace's blocks in a daemon thread (one at a time per namespace),
        in short transactions of its own: recall and writes go on meanwhile."""
        db, key = self.db, (space.key, namespace)
        running = self._building.get(key)
        if db is None or (running is not None and running.is_alive()):
            return

        def run() -> None:
            try:
                done = self.reads.rebuild_blocks(db, space, namespace)
                log.info("vector_blocks_rebuilt", namespace=namespace, live=done)
            except Exception as exc:  # noqa: BLE001 - a closed store, a busy one: retried later
                log.warning("vector_blocks_rebuild_failed", namespace=namespace,
                            error=str(exc))

        thread = threading.Thread(target=run, name=f"vector-blocks-{namespace}", daemon=True)
        self._building[key] = thread
        thread.start()

    def wait_for_rebuilds(self, timeout: float | None = None) -> None:
        """Wait for the background block rebuilds started so far (benches, tests)."""
        for thread in list(self._building.values()):
            thread.join(timeout)

    def _evict(self, keep: tuple[str, str]) -> None:
        while self.nbytes > self.budget_bytes and len(self._slices) > 1:
            oldest = next(k for k in self._slices if k != keep)
            del self._slices[oldest]

    def scores(
        self,
        conn: Connection,
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
                parts.append(self._streamed(conn, table, namespace, query))
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

    def _streamed(
        self, conn: Connection, table: str, namespace: str, query: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, float, float]:
        """Every row's cosine, read from the table a chunk at a time and quantised as the
        mirror would (over budget: no mirror, no neighbour smoothing)."""
        ids: list[np.ndarray] = []
        scores: list[np.ndarray] = []
        cursor = self.reads.stream(conn, table, namespace)
        while batch := cursor.fetchmany(_CHUNK):
            ids.append(np.fromiter((r[0] for r in batch), np.int64, len(batch)))
            matrix = np.frombuffer(b"".join(r[1] for r in batch), np.float32)
            scores.append(_scored(*quantise(matrix.reshape(len(batch), -1)), query))
        if not ids:
            return np.zeros(0, np.int64), np.zeros(0, np.float32), 0.0, 0.0
        rowids, values = np.concatenate(ids), np.concatenate(scores)
        order = np.argsort(rowids)
        return rowids[order], values[order], float(values.min()), float(values.max())
