"""Duplicates: exact ones (found by maintenance), near ones (caught on write), and merging.

Conversation turns are never deduplicated: two people saying "sounds good" are two
things said. Near duplicates compare the vectors recall already keeps (no extra
encoding), within one namespace and one kind.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import clock
from ..recall.mirror import VectorMirror
from ..storage.portable.near_codes import PortableNearCodes
from ..storage.portable.vectors import PortableVectorReads
from ..storage.protocol import Connection
from ..storage.store import NewRow, Written
from ..trust import review
from . import tiers
from .near_codes import StoredCodes
from .near_index import INDEX_FROM

if TYPE_CHECKING:
    from ..core.settings import Settings
    from ..core.space import EmbeddingSpace
    from ..storage.protocol import Database
    from ..storage.repositories import MemoryRows

__all__ = [
    "DEDUP_KINDS", "ExactGroup", "NearDuplicates", "exact_groups", "load_vectors", "merge",
    "similar_pairs",
]

DEDUP_KINDS = ("note", "learning", "fact", "summary")
# Read-only vector index for the module-level functions (the table is named by the
# caller, so reading needs no vec_available flag).
_VECTORS = PortableVectorReads()  # the reads both backends run as written


@dataclass(frozen=True)
class ExactGroup:
    """Active memories with the same text and kind; ``keep`` is the oldest."""

    keep: str
    others: list[str]
    same_tags: bool
    kind: str


def exact_groups(conn: Connection, namespace: str, store: MemoryRows) -> list[ExactGroup]:
    groups: dict[tuple[str, str, str], list[tuple[str, frozenset[str]]]] = {}
    for memory_id, digest, kind, content, tags in store.exact_duplicate_rows(conn, namespace):
        # The text itself, not only its hash, decides: a collision must never retire.
        groups.setdefault((digest, kind, content), []).append((memory_id, frozenset(tags)))
    out = []
    for (_, kind, _), members in groups.items():
        if len(members) > 1:
            tagsets = {tags for _, tags in members}
            out.append(ExactGroup(members[0][0], [m for m, _ in members[1:]],
                                  len(tagsets) == 1, kind))
    return out


def merge(
    tx: Connection, store: MemoryRows, source_id: str, into_id: str, namespace: str, *, actor: str,
    score: float | None, reason: str,
) -> bool:
    """Archive ``source_id`` into ``into_id``: the survivor takes its tags and the higher
    importance; the source stays readable, linked ``merged_into``. False if either is gone."""
    into = store.active_tags_importance(tx, into_id, namespace)
    source = store.active_tags_importance(tx, source_id, namespace)
    if into is None or source is None or source_id == into_id:
        return False
    into_rowid, into_tags, into_importance = into
    tags = list(into_tags)
    tags += [t for t in source[1] if t not in tags]
    fields: dict[str, Any] = {}
    if tags != into_tags:
        fields["tags"] = tags
    if source[2] > into_importance:
        fields["importance"] = source[2]
    if fields:
        store.update_fields(tx, into_rowid, fields)
    tiers.archive(tx, store, source_id, namespace, actor=actor, reason=reason,
                  detail={"into": into_id})
    tiers.add_link(tx, source_id, into_id, "merged_into", namespace, score)
    return True


def load_vectors(
    conn: Connection, table: str, namespace: str, *, above: int = 0, below: int | None = None,
    active_only: bool = True,
) -> tuple[np.ndarray, list[str], list[str], np.ndarray]:
    """(rowids, ids, kinds, unit vectors) of a namespace's non-turn memories."""
    rows = _VECTORS.dedup_rows(conn, table, namespace, DEDUP_KINDS, above=above, below=below,
                               active_only=active_only)
    if not rows:
        return np.zeros(0, dtype=np.int64), [], [], np.zeros((0, 0), dtype=np.float32)
    matrix = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32)
    return (
        np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
        [str(r[1]) for r in rows],
        [str(r[2]) for r in rows],
        matrix.reshape(len(rows), -1),
    )


def similar_pairs(
    vectors: np.ndarray, threshold: float, *, chunk: int = 1024
) -> Iterator[tuple[int, int, float]]:
    """(i, j, cosine) for i < j at or above ``threshold``; memory stays chunk x n."""
    n = len(vectors)
    for start in range(0, n, chunk):
        block = vectors[start : start + chunk] @ vectors.T
        rows, cols = np.nonzero(block >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i = start + r
            if i < c:
                yield i, c, float(block[r, c])


_blas: Any = None


def _one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """Single-threaded BLAS for the write path's small products.

    Measured: after a multi-threaded OpenBLAS product its idle threads keep spinning and
    the encoder of the next batch ran 10-20 % slower on 2 cores; one thread costs the
    product nothing at these sizes.
    """
    global _blas
    if _blas is None:
        try:
            from threadpoolctl import ThreadpoolController

            _blas = ThreadpoolController()
        except ImportError:  # not installed: plain products
            _blas = False
    if _blas is False:
        return contextlib.nullcontext()
    return _blas.limit(limits=1, user_api="blas")  # type: ignore[no-any-return]


class NearDuplicates:
    """The write hook: compares new rows' vectors with the namespace's (non-turn) vectors.

    Those come from the vector mirror recall shares (no copy of its own), refreshed
    before the write lock (``prepare``) from committed rows only; rows committed since
    by another process, below the batch being written, are read in the transaction. A
    rolled-back write never leaves a vector behind; a candidate is checked against the
    table before anything is done with it.
    """

    def __init__(
        self, store: MemoryRows, settings: Settings, space: Callable[[], EmbeddingSpace | None],
        actor: Callable[[], str], *, mirror: VectorMirror | None = None,
        db: Database | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.space = space
        self.actor = actor
        self.mirror = mirror if mirror is not None else VectorMirror(store.vectors)
        self.db = db
        # Big namespaces are checked through hashing codes kept in the store, not a scan
        # (near_codes.py).
        self.codes = StoredCodes(DEDUP_KINDS)

    def live(self) -> bool:
        return self.settings.near_duplicate_policy != "off" and self.space() is not None

    def _candidates(self, rows: Sequence[NewRow]) -> set[str]:
        return {r.namespace for r in rows if r.kind in DEDUP_KINDS and r.session_id is None
                and r.status == "active"}

    def prepare(self, rows: Sequence[NewRow]) -> Any:
        """Bring the mirror up to date for the batch's namespaces, before the lock."""
        space = self.space()
        namespaces = self._candidates(rows)
        if not namespaces or space is None or self.db is None or not self.live():
            return None
        if self.db.in_transaction():  # inside a write: it may hold uncommitted rows
            return None
        with self.db.read() as conn:
            found = self.store.vectors.table_of(conn, space)
            if found:
                for namespace in namespaces:
                    self.mirror.slice(conn, space, found, namespace)
        return None

    def apply(self, tx: Connection, written: list[Written], vectors: Any, state: Any) -> None:
        self(tx, written, vectors)

    def __call__(self, tx: Connection, written: list[Written], vectors: Any) -> None:
        space = self.space()
        policy = self.settings.near_duplicate_policy
        if vectors is None or space is None or policy == "off":
            return
        rows = [w for w in written if w.row.kind in DEDUP_KINDS and w.row.session_id is None
                and w.row.status == "active"]
        if not rows:
            return
        found = self.store.vectors.table_of(tx, space)
        if not found:
            return
        first = min(w.rowid for w in written)
        by_namespace: dict[str, list[Written]] = {}
        for w in rows:
            by_namespace.setdefault(w.row.namespace, []).append(w)
        for namespace, batch in by_namespace.items():
            coded = [w for w in written if w.row.namespace == namespace
                     and w.row.kind in DEDUP_KINDS]
            self._check(tx, space.key, found, namespace, batch, coded, vectors, first, policy)

    def _known(
        self, tx: Connection, key: str, table: str, namespace: str, query: np.ndarray, first: int,
        threshold: float,
    ) -> tuple[list[tuple[int, int, float]], int | None]:
        """(query index, rowid, cosine) of committed rows at or above the threshold: the
        mirror's (as last refreshed, never from this transaction), then the rows above
        it and below the batch, read here; and the namespace's code slice once its rows
        below the batch all have codes."""
        cached = self.mirror.cached(key, namespace)
        above = cached.max_rowid if cached is not None else 0
        pairs: list[tuple[int, int, float]] = []
        extra = None
        if first - 1 > above:
            rowids, _, _, matrix = load_vectors(tx, table, namespace, above=above, below=first,
                                                active_only=False)
            if len(rowids):
                extra = (rowids, matrix)
                block = matrix @ query.T
                rows, cols = np.nonzero(block >= threshold)
                pairs += [(int(c), int(rowids[r]), float(block[r, c]))
                          for r, c in zip(rows.tolist(), cols.tolist(), strict=True)]
        slice_id = self.codes.catch_up(tx, key, namespace, cached, extra, first)
        if not cached:
            return pairs, slice_id
        if slice_id is None or cached.view.size < INDEX_FROM:
            return pairs + list(cached.similar(query, threshold, first, DEDUP_KINDS)), slice_id
        pairs += self.codes.similar(tx, slice_id, cached, query, threshold, first, prune=True)
        return pairs, slice_id

    def _code(self, tx: Connection, key: str, namespace: str, slice_id: int | None,
              coded: list[Written], vectors: Any) -> None:
        """The codes of the namespace's new rows of the checked kinds (the mirror's own
        set: any status), and the slice's watermark past them once it was caught up."""
        caught_up = slice_id is not None
        if slice_id is None:
            slice_id = PortableNearCodes.slice_of(tx, key, namespace)[0]
        self.codes.add(tx, slice_id, np.array([w.rowid for w in coded], np.int64),
                       np.asarray([vectors[w.index] for w in coded], dtype=np.float32))
        if caught_up:
            PortableNearCodes.coded(tx, slice_id, max(w.rowid for w in coded))

    def _check(
        self, tx: Connection, key: str, table: str, namespace: str, batch: list[Written],
        coded: list[Written], vectors: Any, first: int, policy: str,
    ) -> None:
        threshold = self.settings.near_duplicate_threshold
        query = np.asarray([vectors[w.index] for w in batch], dtype=np.float32)
        with _one_blas_thread():
            old, slice_id = self._known(tx, key, table, namespace, query, first, threshold)
            own = query @ query.T
            self._code(tx, key, namespace, slice_id, coded, vectors)
        by_query: dict[int, list[tuple[float, int]]] = {}
        for j, rowid, score in old:
            by_query.setdefault(j, []).append((score, rowid))
        for j, w in enumerate(batch):
            candidates: list[tuple[float, int]] = list(by_query.get(j, []))
            for i in range(j):  # an earlier row of the same batch
                if own[i, j] >= threshold and batch[i].row.kind == w.row.kind:
                    candidates.append((float(own[i, j]), batch[i].rowid))
            for score, rowid in sorted(candidates, reverse=True):
                target = self.store.active_id_at(tx, rowid, namespace, w.row.kind)
                if target is not None:
                    self._apply(tx, policy, w, target, namespace, score)
                    break

    def _apply(
        self, tx: Connection, policy: str, w: Written, into: str, namespace: str, score: float
    ) -> None:
        score = round(score, 4)
        if policy == "merge":
            merge(tx, self.store, w.id, into, namespace, actor=self.actor(), score=score,
                  reason="near duplicate on write")
            return
        tiers.add_link(tx, w.id, into, "near_duplicate", namespace, score)
        if policy == "review":
            expires = clock.now() + timedelta(days=self.settings.proposal_expiry_days)
            review.open_item(
                tx, namespace=namespace, kind="merge", memory_id=w.id, expires_at=expires,
                evidence={"key": f"merge:{w.id}:{into}", "into": into, "similarity": score,
                          "threshold": self.settings.near_duplicate_threshold,
                          "found": "on write"},
            )
