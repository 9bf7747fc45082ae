"""A hashing index over a namespace's vectors, so that the near-duplicate check on write
costs the same in a store of a thousand memories and of a million.

Scoring every stored row against a batch is rows x batch work: at 300k notes it made
``store_many`` 0.75x its rate at 1k. Here each row gets ``TABLES`` codes of ``BITS``
sign bits of random projections (a fixed seed: every process hashes alike); a row at
cosine c to a query lands in the query's bucket of a table with probability
(1 - arccos(c) / pi) ** BITS. A query also probes the buckets that differ from its own
in the bits it is least sure of (its projections nearest zero, where a neighbour's bit
flips most often), up to two of ``PROBE_BITS`` at a time. The few rows found are then
scored exactly (the caller's cosines), so a pair found has the score the full scan
gives it; what the index can do is miss one, measured against the full scan in
docs/benchmarks.md ("Ingest"), where the constants were chosen.

Codes are kept per table in two sorted runs, a big one and a small one new rows merge
into (merged into the big one when it reaches a sixteenth of it): adding a row costs a
bounded amortised number of copies, a lookup two binary searches per probe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any, NamedTuple

import numpy as np

__all__ = ["BITS", "INDEX_FROM", "PROBE_BITS", "TABLES", "NearIndex", "SliceIndexes"]

TABLES = 8
BITS = 16
PROBE_BITS = 5  # least certain bits a query flips, one or two at a time
_SEED = 2028
_CHUNK = 16_384  # rows projected at a time
_SMALL_MIN = 4_096


class _Run:
    """Sorted (code, position) pairs of one table."""

    def __init__(self) -> None:
        self.codes = np.zeros(0, np.uint32)
        self.positions = np.zeros(0, np.int32)  # a mirror row index: 2**31 rows is far off

    def merged(self, codes: np.ndarray, positions: np.ndarray) -> None:
        codes = np.concatenate([self.codes, codes])
        positions = np.concatenate([self.positions, positions])
        order = np.argsort(codes, kind="stable")
        self.codes, self.positions = codes[order], positions[order]

    def find(self, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(which wanted code, position) of every stored pair with a wanted code."""
        lo = np.searchsorted(self.codes, wanted, "left")
        hi = np.searchsorted(self.codes, wanted, "right")
        counts = hi - lo
        total = int(counts.sum())
        if not total:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        owner = np.repeat(np.arange(len(wanted)), counts)
        starts = np.repeat(lo - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        return owner, self.positions[starts + np.arange(total)]


class NearIndex:
    """Codes of added rows (each named by a caller's position, e.g. a mirror row index)."""

    def __init__(self, dim: int, *, tables: int = TABLES, bits: int = BITS,
                 probe_bits: int = PROBE_BITS) -> None:
        rng = np.random.default_rng(_SEED)
        self.tables, self.bits = tables, bits
        self.planes = rng.standard_normal((dim, tables * bits)).astype(np.float32)
        self.weights = (np.uint32(1) << np.arange(bits, dtype=np.uint32)).astype(np.uint32)
        self.big = [_Run() for _ in range(tables)]
        self.small = [_Run() for _ in range(tables)]
        self.size = 0
        flips = [(), *((i,) for i in range(probe_bits)), *combinations(range(probe_bits), 2)]
        self._flips = flips  # indices into a query's least certain bits

    @property
    def nbytes(self) -> int:
        return sum(r.codes.nbytes + r.positions.nbytes for r in (*self.big, *self.small))

    def _project(self, vectors: np.ndarray) -> np.ndarray:
        parts = [np.asarray(vectors[i : i + _CHUNK], np.float32) @ self.planes
                 for i in range(0, len(vectors), _CHUNK)]
        z = np.concatenate(parts) if parts else np.zeros((0, self.planes.shape[1]), np.float32)
        return z.reshape(len(vectors), self.tables, self.bits)

    def _codes(self, z: np.ndarray) -> np.ndarray:
        out: np.ndarray = ((z > 0).astype(np.uint32) * self.weights).sum(axis=2, dtype=np.uint32)
        return out

    def add(self, positions: np.ndarray, vectors: np.ndarray) -> None:
        """Index rows (any positive scale of a vector hashes alike: int8 rows do)."""
        if not len(positions):
            return
        codes = self._codes(self._project(vectors))
        positions = np.asarray(positions, np.int32)
        for t in range(self.tables):
            small = self.small[t]
            small.merged(codes[:, t], positions)
            if len(small.codes) >= max(_SMALL_MIN, len(self.big[t].codes) // 16):
                self.big[t].merged(small.codes, small.positions)
                self.small[t] = _Run()
        self.size += len(positions)

    def candidates(self, queries: np.ndarray) -> list[np.ndarray]:
        """For each query, the sorted positions sharing a probed bucket in some table."""
        z = self._project(queries)  # (queries, tables, bits)
        base = self._codes(z)
        least = np.argsort(np.abs(z), axis=2)[:, :, : max(max(f, default=0)
                                                          for f in self._flips) + 1]
        probes = np.empty((len(queries), self.tables, len(self._flips)), np.uint32)
        for p, flip in enumerate(self._flips):
            mask = np.zeros(base.shape, np.uint32)
            for i in flip:
                mask |= self.weights[least[:, :, i]]
            probes[:, :, p] = base ^ mask
        found: list[list[np.ndarray]] = [[] for _ in range(len(queries))]
        for t in range(self.tables):
            wanted = probes[:, t, :].ravel()
            for run in (self.big[t], self.small[t]):
                owner, positions = run.find(wanted)
                if len(owner):
                    query = owner // len(self._flips)
                    order = np.argsort(query, kind="stable")
                    cuts = np.searchsorted(query[order], np.arange(1, len(queries)))
                    for q, part in enumerate(np.split(positions[order], cuts)):
                        if len(part):
                            found[q].append(part)
        return [np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
                for parts in found]


INDEX_FROM = 20_000  # rows of the wanted kinds before a slice is indexed (below: the scan)
DENSE_SHARE = 16  # more candidates than rows / this, per query: the scan is cheaper


class _Entry(NamedTuple):
    slice: Any  # the mirror slice indexed (a reload makes a new one: index again)
    near: NearIndex | None  # None while the slice is small
    upto: int  # slice rows looked at so far
    wanted: int  # of those, rows of the wanted kinds


class SliceIndexes:
    """A NearIndex per vector-mirror slice (recall/mirror.py) of more than ``INDEX_FROM``
    rows of ``kinds``, following the slice's appends; ``similar`` answers as the
    slice's own ``similar`` does, from the rows the index finds."""

    def __init__(self, kinds: Sequence[str]) -> None:
        self.kinds = tuple(kinds)
        self._entries: dict[tuple[str, str], _Entry] = {}

    def _entry(self, key: tuple[str, str], found: Any) -> _Entry:
        entry = self._entries.get(key)
        size = found.view.size
        if entry is None or entry.slice is not found or entry.upto > size:
            entry = _Entry(found, None, 0, 0)
        if entry.upto < size:
            rows = found.kind_rows(self.kinds, entry.upto, size)
            index, count = entry.near, entry.wanted + len(rows)
            if index is None and count >= INDEX_FROM:
                index = NearIndex(found.dim)
                rows = found.kind_rows(self.kinds, 0, size)
            if index is not None:
                for start in range(0, len(rows), _CHUNK):
                    part = rows[start : start + _CHUNK]
                    index.add(part, found.view.vectors.rows(int(part[0]), int(part[-1]) + 1)
                              [part - part[0]])
            entry = _Entry(found, index, size, count)
        self._entries[key] = entry
        return entry

    def similar(self, key: tuple[str, str], found: Any, queries: np.ndarray, threshold: float,
                below: int) -> list[tuple[int, int, float]]:
        """(query index, rowid, cosine >= threshold) over the slice's rows below ``below``."""
        entry = self._entry(key, found)
        if entry.near is None:
            return list(found.similar(queries, threshold, below, self.kinds))
        candidates = entry.near.candidates(queries)
        if sum(len(c) for c in candidates) * DENSE_SHARE > len(queries) * entry.wanted:
            return list(found.similar(queries, threshold, below, self.kinds))
        rowids = found.view.rowids
        out: list[tuple[int, int, float]] = []
        for j, positions in enumerate(candidates):
            positions = positions[rowids[positions] < below]
            if not len(positions):
                continue
            scores = found.scores_at(positions, queries[j])
            hit = np.flatnonzero(scores >= threshold)
            out.extend((j, int(rowids[positions[h]]), float(scores[h])) for h in hit.tolist())
        return out

    def forget(self, keep: Callable[[tuple[str, str]], bool]) -> None:
        """Drop the indexes of slices the mirror no longer holds."""
        for key in [k for k in self._entries if not keep(k)]:
            del self._entries[key]
