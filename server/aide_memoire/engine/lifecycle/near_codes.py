"""The near-duplicate check through codes kept in the store, so that its cost depends
neither on the namespace's size nor on how long the process has run.

Each checked row gets ``TABLES`` codes of ``BITS`` sign bits (near_index.Hasher, a
fixed seed: every process and the store hash alike), written in the row's own
transaction (schema step 16). A batch's rows look up their probed buckets by the
primary key; a bucket keeps its ``PER_BUCKET`` newest rows (catching a namespace up
writes no more; a lookup inside a write prunes the older ones of a fuller bucket), so a
lookup reads a bounded number of rows whatever the store's size. Only the rows found are
scored, exactly, from the vector mirror: a pair found has the score the full scan gives
it; what the bound can do is miss one whose buckets all filled with newer rows (measured
against the scan in docs/benchmarks.md, "Issue 28, round 9: ingest"). A namespace's rows
stored before the step, or by a writer that skips the check (the bulk loader), are coded
on its next checked write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..storage.portable.near_codes import PortableNearCodes
from ..storage.protocol import Connection
from .near_index import BITS, TABLES, Hasher

__all__ = ["PER_BUCKET", "StoredCodes"]

PER_BUCKET = 16  # newest rows a bucket keeps (and a lookup reads)
_CHUNK = 16_384  # rows coded at a time when a namespace is caught up


class StoredCodes:
    """Codes of one embedding space's rows per namespace, in the store."""

    def __init__(self, kinds: Sequence[str]) -> None:
        self.kinds = tuple(kinds)
        self._hashers: dict[int, Hasher] = {}

    def hasher(self, dim: int) -> Hasher:
        if dim not in self._hashers:
            self._hashers[dim] = Hasher(dim)
        return self._hashers[dim]

    def add(self, tx: Connection, slice_id: int, rowids: np.ndarray, vectors: np.ndarray,
            held: np.ndarray | None = None) -> None:
        """Codes of ``rowids``. With ``held`` (rows each key already got, newer ones
        first: see catch_up) only a key's ``PER_BUCKET`` newest are written."""
        if not len(rowids):
            return
        codes = self.hasher(vectors.shape[1]).codes(vectors).astype(np.int64)
        keys = (codes + (np.arange(codes.shape[1], dtype=np.int64) << BITS)[None, :]).ravel()
        rows = np.repeat(np.asarray(rowids, np.int64), codes.shape[1])
        if held is not None:
            keep = _newest(keys, rows, held)
            keys, rows = keys[keep], rows[keep]
        order = np.argsort(keys, kind="stable")  # b-tree order: appends
        PortableNearCodes.add(tx, ((slice_id, int(k), int(r)) for k, r in
                                   zip(keys[order].tolist(), rows[order].tolist(), strict=True)))

    def catch_up(self, tx: Connection, space: str, namespace: str, cached: Any,
                 extra: tuple[np.ndarray, np.ndarray] | None, upto: int) -> int | None:
        """The slice id once every row of the namespace below ``upto`` has its codes:
        rows the mirror holds are coded from it, the rows above it from ``extra``
        ((rowids, vectors), read in the transaction). None without a mirror slice."""
        slice_id, coded_to = PortableNearCodes.slice_of(tx, space, namespace)
        if coded_to >= upto - 1:
            return slice_id
        if cached is None:
            return None
        # Newest rows first, each bucket's count kept: a bucket gets only the rows a
        # lookup would keep of it (a crowded namespace's older rows are never written,
        # rather than pruned later, a few thousand at a time, by the writes that find them).
        held = np.zeros(TABLES << BITS, np.int32)
        if extra is not None and len(extra[0]):
            keep = extra[0] > coded_to
            self.add(tx, slice_id, extra[0][keep], extra[1][keep], held)
        view = cached.view
        start = int(np.searchsorted(view.rowids[: view.size], coded_to, "right"))
        rows = cached.kind_rows(self.kinds, start, view.size)
        for first in reversed(range(0, len(rows), _CHUNK)):
            part = rows[first : first + _CHUNK]
            vectors = view.vectors.rows(int(part[0]), int(part[-1]) + 1)[part - part[0]]
            self.add(tx, slice_id, view.rowids[part], vectors, held)
        PortableNearCodes.coded(tx, slice_id, upto - 1)
        return slice_id

    def candidates(self, conn: Connection, slice_id: int, queries: np.ndarray, *,
                   prune: bool = False) -> list[np.ndarray]:
        """For each query, the sorted rowids of the ``PER_BUCKET`` newest rows of each of
        its probed buckets; with ``prune`` (inside a write) a bucket found fuller loses
        its older rows, so that no lookup reads more than that many rows a bucket."""
        probes = self.hasher(queries.shape[1]).probes(queries).astype(np.int64)
        bands = (np.arange(probes.shape[1], dtype=np.int64) << BITS)[None, :, None]
        keys = (probes + bands).reshape(len(queries), -1)
        out: list[np.ndarray] = []
        cuts: dict[int, int] = {}
        for wanted in keys:
            rows = np.asarray(PortableNearCodes.found(conn, slice_id, np.unique(wanted).tolist()),
                              np.int64).reshape(-1, 2)
            order = np.lexsort((-rows[:, 1], rows[:, 0]))  # by key, newest first
            rows = rows[order]
            present, starts, counts = np.unique(rows[:, 0], return_index=True,
                                                return_counts=True)
            rank = np.arange(len(rows)) - np.repeat(starts, counts)
            kept = rows[rank < PER_BUCKET]
            full = counts > PER_BUCKET
            for key, start in zip(present[full].tolist(), starts[full].tolist(), strict=True):
                cuts[key] = int(rows[start + PER_BUCKET - 1, 1])
            out.append(np.unique(kept[:, 1]))
        if prune and cuts:
            PortableNearCodes.prune(conn, slice_id, cuts.items())
        return out

    def similar(self, conn: Connection, slice_id: int, cached: Any, queries: np.ndarray,
                threshold: float, below: int, *, prune: bool = False,
                ) -> list[tuple[int, int, float]]:
        """(query index, rowid, cosine >= threshold) over the rows found that the mirror
        slice ``cached`` holds below ``below``, scored as its own ``similar`` scores."""
        view = cached.view
        rowids = view.rowids[: view.size]
        out: list[tuple[int, int, float]] = []
        if not len(rowids):
            return out
        for j, found in enumerate(self.candidates(conn, slice_id, queries, prune=prune)):
            found = found[found < below]
            at = np.minimum(np.searchsorted(rowids, found), len(rowids) - 1)
            at = at[rowids[at] == found]  # rows above the mirror: the caller reads them
            if not len(at):
                continue
            scores = cached.scores_at(at, queries[j])
            hit = np.flatnonzero(scores >= threshold)
            out.extend((j, int(rowids[at[h]]), float(scores[h])) for h in hit.tolist())
        return out


def _newest(keys: np.ndarray, rows: np.ndarray, held: np.ndarray) -> np.ndarray:
    """Which (key, row) pairs are among their key's ``PER_BUCKET`` newest, given ``held``
    rows per key already kept (all newer than these); ``held`` is updated."""
    order = np.lexsort((-rows, keys))
    ordered = keys[order]
    _, starts, counts = np.unique(ordered, return_index=True, return_counts=True)
    rank = np.arange(len(ordered)) - np.repeat(starts, counts)
    keep = np.empty(len(keys), bool)
    keep[order] = rank + held[ordered] < PER_BUCKET
    held += np.bincount(keys, minlength=len(held)).astype(np.int32)
    return keep
