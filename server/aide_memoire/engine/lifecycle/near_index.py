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
bounded amortised number of copies, a lookup two binary searches per probe. The write
path no longer builds this in memory: it keeps the same codes in the store
(near_codes.py, schema step 16); this index remains what the bench measures them by.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

__all__ = ["BITS", "INDEX_FROM", "PROBE_BITS", "TABLES", "Hasher", "NearIndex"]

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


class Hasher:
    """``tables`` codes of ``bits`` sign bits of fixed random projections per vector, and
    the probes of a query (its own code, then one or two of its least certain bits
    flipped): the same in every process and in the store (lifecycle/near_codes.py)."""

    def __init__(self, dim: int, *, tables: int = TABLES, bits: int = BITS,
                 probe_bits: int = PROBE_BITS) -> None:
        rng = np.random.default_rng(_SEED)
        self.tables, self.bits = tables, bits
        self.planes = rng.standard_normal((dim, tables * bits)).astype(np.float32)
        self.weights = (np.uint32(1) << np.arange(bits, dtype=np.uint32)).astype(np.uint32)
        self.flips = [(), *((i,) for i in range(probe_bits)), *combinations(range(probe_bits), 2)]

    def project(self, vectors: np.ndarray) -> np.ndarray:
        parts = [np.asarray(vectors[i : i + _CHUNK], np.float32) @ self.planes
                 for i in range(0, len(vectors), _CHUNK)]
        z = np.concatenate(parts) if parts else np.zeros((0, self.planes.shape[1]), np.float32)
        return z.reshape(len(vectors), self.tables, self.bits)

    def codes_of(self, z: np.ndarray) -> np.ndarray:
        """(rows, tables) codes of projections ``z``."""
        out: np.ndarray = ((z > 0).astype(np.uint32) * self.weights).sum(axis=2, dtype=np.uint32)
        return out

    def codes(self, vectors: np.ndarray) -> np.ndarray:
        """(rows, tables) codes (any positive scale of a vector hashes alike: int8 rows do)."""
        return self.codes_of(self.project(vectors))

    def probes(self, queries: np.ndarray) -> np.ndarray:
        """(queries, tables, probes) codes each query looks up, its own code first."""
        z = self.project(queries)
        base = self.codes_of(z)
        least = np.argsort(np.abs(z), axis=2)[:, :, : max(max(f, default=0)
                                                          for f in self.flips) + 1]
        probes = np.empty((len(queries), self.tables, len(self.flips)), np.uint32)
        for p, flip in enumerate(self.flips):
            mask = np.zeros(base.shape, np.uint32)
            for i in flip:
                mask |= self.weights[least[:, :, i]]
            probes[:, :, p] = base ^ mask
        return probes


class NearIndex:
    """Codes of added rows (each named by a caller's position, e.g. a mirror row index)."""

    def __init__(self, dim: int, *, tables: int = TABLES, bits: int = BITS,
                 probe_bits: int = PROBE_BITS) -> None:
        self.hasher = Hasher(dim, tables=tables, bits=bits, probe_bits=probe_bits)
        self.tables = tables
        self.big = [_Run() for _ in range(tables)]
        self.small = [_Run() for _ in range(tables)]
        self.size = 0

    @property
    def nbytes(self) -> int:
        return sum(r.codes.nbytes + r.positions.nbytes for r in (*self.big, *self.small))

    def add(self, positions: np.ndarray, vectors: np.ndarray) -> None:
        """Index rows (any positive scale of a vector hashes alike: int8 rows do)."""
        if not len(positions):
            return
        codes = self.hasher.codes(vectors)
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
        probes = self.hasher.probes(queries)
        flips = probes.shape[2]
        found: list[list[np.ndarray]] = [[] for _ in range(len(queries))]
        for t in range(self.tables):
            wanted = probes[:, t, :].ravel()
            for run in (self.big[t], self.small[t]):
                owner, positions = run.find(wanted)
                if len(owner):
                    query = owner // flips
                    order = np.argsort(query, kind="stable")
                    cuts = np.searchsorted(query[order], np.arange(1, len(queries)))
                    for q, part in enumerate(np.split(positions[order], cuts)):
                        if len(part):
                            found[q].append(part)
        return [np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
                for parts in found]


INDEX_FROM = 20_000  # mirror rows of a namespace before its codes are looked up (below: the scan)
