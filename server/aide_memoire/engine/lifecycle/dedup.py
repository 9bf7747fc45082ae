"""Duplicates: exact ones (found by maintenance), near ones (caught on write), and merging.

Conversation turns are never deduplicated: two people saying "sounds good" are two
things said. Near duplicates compare the vectors recall already keeps (no extra
encoding), within one namespace and one kind.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import clock
from ..store import Store, Written
from ..trust import review
from . import tiers

if TYPE_CHECKING:
    from ..embed import EmbeddingSpace
    from ..settings import Settings

__all__ = [
    "DEDUP_KINDS", "ExactGroup", "NearDuplicates", "exact_groups", "load_vectors", "merge",
    "similar_pairs",
]

DEDUP_KINDS = ("note", "learning", "fact", "summary")
_KINDS_SQL = ",".join(f"'{k}'" for k in DEDUP_KINDS)


@dataclass(frozen=True)
class ExactGroup:
    """Active memories with the same text and kind; ``keep`` is the oldest."""

    keep: str
    others: list[str]
    same_tags: bool
    kind: str


def exact_groups(conn: Any, namespace: str) -> list[ExactGroup]:
    rows = conn.execute(
        "SELECT id, content_hash, kind, content, tags FROM memories WHERE namespace = ? "
        "AND status = 'active' AND session_id IS NULL AND content_hash IN ("
        "  SELECT content_hash FROM memories WHERE namespace = ? AND status = 'active' "
        "  AND session_id IS NULL GROUP BY content_hash, kind HAVING count(*) > 1) "
        "ORDER BY rowid",
        (namespace, namespace),
    ).fetchall()
    groups: dict[tuple[str, str, str], list[tuple[str, frozenset[str]]]] = {}
    for memory_id, digest, kind, content, tags in rows:
        # The text itself, not only its hash, decides: a collision must never retire.
        groups.setdefault((str(digest), str(kind), str(content)), []).append(
            (str(memory_id), frozenset(json.loads(tags)))
        )
    out = []
    for (_, kind, _), members in groups.items():
        if len(members) > 1:
            tagsets = {tags for _, tags in members}
            out.append(ExactGroup(members[0][0], [m for m, _ in members[1:]],
                                  len(tagsets) == 1, kind))
    return out


def merge(
    tx: Any, store: Store, source_id: str, into_id: str, namespace: str, *, actor: str,
    score: float | None, reason: str,
) -> bool:
    """Archive ``source_id`` into ``into_id``: the survivor takes its tags and the higher
    importance; the source stays readable, linked ``merged_into``. False if either is gone."""
    into = tx.execute(
        "SELECT rowid, tags, importance FROM memories WHERE id = ? AND namespace = ? "
        "AND status = 'active'", (into_id, namespace),
    ).fetchone()
    source = tx.execute(
        "SELECT tags, importance FROM memories WHERE id = ? AND namespace = ? "
        "AND status = 'active'", (source_id, namespace),
    ).fetchone()
    if into is None or source is None or source_id == into_id:
        return False
    tags = list(json.loads(into[1]))
    tags += [t for t in json.loads(source[0]) if t not in tags]
    fields: dict[str, Any] = {}
    if tags != json.loads(into[1]):
        fields["tags"] = tags
    if float(source[1]) > float(into[2]):
        fields["importance"] = float(source[1])
    if fields:
        store.update_fields(tx, int(into[0]), fields)
    tiers.archive(tx, store, source_id, namespace, actor=actor, reason=reason,
                  detail={"into": into_id})
    tiers.add_link(tx, source_id, into_id, "merged_into", namespace, score)
    return True


def load_vectors(
    conn: Any, table: str, namespace: str, *, above: int = 0, below: int | None = None,
    active_only: bool = True,
) -> tuple[np.ndarray, list[str], list[str], np.ndarray]:
    """(rowids, ids, kinds, unit vectors) of a namespace's non-turn memories."""
    sql = (
        f"SELECT m.rowid, m.id, m.kind, v.embedding FROM {table} v "
        "JOIN memories m ON m.rowid = v.rowid "
        f"WHERE v.namespace = ? AND m.kind IN ({_KINDS_SQL}) AND m.session_id IS NULL "
        "AND m.rowid > ?"
    )
    args: list[Any] = [namespace, above]
    if below is not None:
        sql += " AND m.rowid < ?"
        args.append(below)
    if active_only:
        sql += " AND m.status = 'active'"
    rows = conn.execute(sql + " ORDER BY m.rowid", args).fetchall()
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


class _Slice:
    def __init__(self) -> None:
        self.epoch = -1
        self.loaded_to = 0
        self.rowids = np.zeros(0, dtype=np.int64)
        self.kinds: list[str] = []
        # Blocks in rowid order, joined only when there are many: stacking the whole
        # matrix on every write copied it all (0.3 s a batch at 100k rows).
        self.blocks: list[np.ndarray] = []

    def add(self, matrix: np.ndarray) -> None:
        self.blocks.append(matrix)
        if len(self.blocks) > 64:
            self.blocks = [np.vstack(self.blocks)]

    def products(self, query: np.ndarray) -> np.ndarray | None:
        """Cosines of every known vector (rows) with each query vector (columns)."""
        if not self.blocks:
            return None
        return np.vstack([block @ query.T for block in self.blocks])


class NearDuplicates:
    """The write hook: compares new rows' vectors with the namespace's (non-turn) vectors.

    Its matrices load only rows below the batch being written (committed before this
    transaction), so a rolled-back write never leaves a vector behind; a candidate is
    checked against the table before anything is done with it.
    """

    def __init__(
        self, store: Store, settings: Settings, space: Callable[[], EmbeddingSpace | None],
        actor: Callable[[], str],
    ) -> None:
        self.store = store
        self.settings = settings
        self.space = space
        self.actor = actor
        self._slices: dict[tuple[str, str], _Slice] = {}
        self._lock = threading.Lock()

    def live(self) -> bool:
        return self.settings.near_duplicate_policy != "off" and self.space() is not None

    def __call__(self, tx: Any, written: list[Written], vectors: Any) -> None:
        space = self.space()
        policy = self.settings.near_duplicate_policy
        if vectors is None or space is None or policy == "off":
            return
        rows = [w for w in written if w.row.kind in DEDUP_KINDS and w.row.session_id is None
                and w.row.status == "active"]
        if not rows:
            return
        found = tx.execute(
            "SELECT table_name FROM vector_spaces WHERE key = ?", (space.key,)
        ).fetchone()
        if not found:
            return
        first = min(w.rowid for w in written)
        by_namespace: dict[str, list[Written]] = {}
        for w in rows:
            by_namespace.setdefault(w.row.namespace, []).append(w)
        for namespace, batch in by_namespace.items():
            with self._lock:
                known = self._refresh(tx, space.key, str(found[0]), namespace, first)
                self._check(tx, namespace, batch, vectors, known, policy)

    def _refresh(self, tx: Any, key: str, table: str, namespace: str, first: int) -> _Slice:
        state = tx.execute(
            "SELECT epoch FROM vector_state WHERE space = ? AND namespace = ?", (key, namespace)
        ).fetchone()
        epoch = int(state[0]) if state else 0
        cached = self._slices.get((key, namespace))
        if cached is None or cached.epoch != epoch:
            cached = _Slice()
            cached.epoch = epoch
        if first - 1 > cached.loaded_to:
            rowids, _, kinds, matrix = load_vectors(
                tx, table, namespace, above=cached.loaded_to, below=first, active_only=False
            )
            if len(rowids):
                cached.rowids = np.concatenate([cached.rowids, rowids])
                cached.kinds += kinds
                cached.add(matrix)
            cached.loaded_to = first - 1
        self._slices[(key, namespace)] = cached
        return cached

    def _check(
        self, tx: Any, namespace: str, batch: list[Written], vectors: Any, known: _Slice,
        policy: str,
    ) -> None:
        threshold = self.settings.near_duplicate_threshold
        query = np.asarray([vectors[w.index] for w in batch], dtype=np.float32)
        with _one_blas_thread():
            old = known.products(query)
            own = query @ query.T
        for j, w in enumerate(batch):
            candidates: list[tuple[float, int | str]] = []
            if old is not None:
                for i in np.nonzero(old[:, j] >= threshold)[0].tolist():
                    if known.kinds[i] == w.row.kind:
                        candidates.append((float(old[i, j]), int(known.rowids[i])))
            for i in range(j):  # an earlier row of the same batch
                if own[i, j] >= threshold and batch[i].row.kind == w.row.kind:
                    candidates.append((float(own[i, j]), batch[i].rowid))
            for score, rowid in sorted(candidates, reverse=True):
                target = tx.execute(
                    "SELECT id FROM memories WHERE rowid = ? AND namespace = ? AND kind = ? "
                    "AND status = 'active'", (rowid, namespace, w.row.kind),
                ).fetchone()
                if target is not None:
                    self._apply(tx, policy, w, str(target[0]), namespace, score)
                    break

    def _apply(
        self, tx: Any, policy: str, w: Written, into: str, namespace: str, score: float
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
