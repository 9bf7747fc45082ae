"""Re-embedding: give every row a vector in the active embedding space.

Used after a model change (the new space starts empty) or for rows that have no vector
(imported keyword-only, written while the model was off). Rows are taken in rowid order
in batches; each batch is encoded outside any transaction, then written in one short
``BEGIN IMMEDIATE`` transaction with its audit event. Stopping at any point loses at
most the batch in flight, and running again resumes where it stopped (rows that have a
vector are never encoded twice). Recall keeps working throughout: rows without a vector
yet are found by keyword, and the vector cache loads each batch as it lands.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..core import clock
from ..core.compose import dense_text
from ..core.errors import InvalidInput
from ..core.space import EmbeddingSpace
from ..recall.embed import Embedder
from ..storage.protocol import Connection, Database
from ..storage.repositories import MemoryRows, VectorIndex
from ..storage.store import content_hash, indexed
from ..trust import audit
from .models import ReembedReport

__all__ = ["Progress", "count_missing", "reembed"]

# progress(done, total): called after each committed batch.
Progress = Callable[[int, int], None]


def count_missing(conn: Connection, tables: VectorIndex, space: EmbeddingSpace,
                  namespace: str | None) -> int:
    return tables.count_missing(conn, space, namespace)


def reembed(
    db: Database,
    store: MemoryRows,
    tables: VectorIndex,
    embedder: Embedder,
    *,
    namespace: str | None = None,
    batch: int = 256,
    progress: Progress | None = None,
    actor: str = "python",
) -> ReembedReport:
    """Encode and store a vector for every row (of ``namespace``) that lacks one."""
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= 10_000:
        raise InvalidInput(f"batch must be a whole number from 1 to 10000, got {batch!r}")
    started = time.perf_counter()
    if not tables.vec_available or not embedder.enabled or not embedder.wait():
        why = "sqlite-vec is not loaded" if not tables.vec_available else embedder.error
        return ReembedReport(model=None, space=None, namespace=namespace, encoded=0,
                             remaining=0, batches=0, seconds=0.0,
                             detail=f"nothing to do: dense recall is off here ({why})")
    space = embedder.space
    assert space is not None
    with db.read() as conn:
        total = count_missing(conn, tables, space, namespace)
    done = batches = 0
    after = 0
    if progress:
        progress(0, total)
    while True:
        with db.read() as conn:
            rowids = tables.missing(conn, space, namespace, batch, after=after)
            records = store.records(conn, rowids)
        if not rowids:
            break
        after = rowids[-1]
        order = [r for r in rowids if r in records]
        vectors = embedder.encode([dense_text(indexed(records[r])) for r in order])
        done += _write_batch(db, store, tables, space, order, records, vectors, actor)
        batches += 1
        if progress:
            progress(done, total)
    with db.read() as conn:
        remaining = count_missing(conn, tables, space, namespace)
    return ReembedReport(model=space.model, space=space.key, namespace=namespace, encoded=done,
                         remaining=remaining, batches=batches,
                         seconds=round(time.perf_counter() - started, 3))


def _write_batch(db: Database, store: MemoryRows, tables: VectorIndex, space: EmbeddingSpace,
                 order: list[int], records: dict[int, Any], vectors: Any, actor: str) -> int:
    """Store the batch's vectors, skipping rows deleted or rewritten since they were read."""
    stamp = clock.format_time(clock.now())
    with db.write() as tx:
        current = store.content_hashes(tx, order)
        items = [
            (rowid, records[rowid].namespace, vectors[i])
            for i, rowid in enumerate(order)
            if current.get(rowid) == content_hash(records[rowid].content)
        ]
        if not items:
            return 0
        tables.insert(tx, space, items, stamp)
        audit.append_event(
            tx, actor=actor, action="reembed",
            detail={"space": space.key, "model": space.model, "count": len(items),
                    "rowids": [items[0][0], items[-1][0]]},
        )
    return len(items)
