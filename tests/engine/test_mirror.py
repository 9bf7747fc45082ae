"""The vector mirror: one bounded float16 copy shared by recall and near duplicates,
scored with no lock held (real model, real SQLite, real sqlite-vec)."""

from __future__ import annotations

import threading

import numpy as np

from aide_memoire import Memory
from aide_memoire.engine.mirror import VectorMirror, _Slice

TOPICS = ["deploy", "billing", "kitchen", "garden", "travel", "music", "sport", "health"]


def _fill(memory: Memory, namespace: str, count: int) -> None:
    memory.store_many(
        [{"content": f"Note {n} about {TOPICS[n % len(TOPICS)]}: item {n * 7919 % 1000} "
                     f"was moved to shelf {n % 13} by {['Ana', 'Ben', 'Cy'][n % 3]}"}
         for n in range(count)], namespace=namespace)


def _table(memory: Memory) -> tuple[object, str]:
    space = memory.embedder.space
    assert space is not None
    return space, memory.vector_tables.table_name(space)


def test_recall_and_near_duplicates_share_one_mirror(memory: Memory) -> None:
    _fill(memory, "p", 40)
    memory.recall("who moved the billing item", namespace="p")
    assert memory.near_duplicates.mirror is memory.recaller.cache is memory.mirror
    (only,) = memory.mirror._slices.values()
    assert only.view.vectors.dtype == np.float16 and only.view.size == 40
    # A near duplicate is still caught against the shared copy.
    first = memory.store("The boiler is serviced every October by Acme Heating.", namespace="p")
    second = memory.store("The boiler gets serviced every October by Acme Heating.", namespace="p")
    assert {"source": second, "target": first, "kind": "near_duplicate"}.items() <= next(
        link for link in memory.links(second) if link["kind"] == "near_duplicate").items()


def test_dense_recalls_score_with_no_lock_held(memory: Memory) -> None:
    _fill(memory, "p", 60)
    expected = [h.id for h in memory.recall("garden shelf moved by Ben", namespace="p")]
    results: dict[int, list[str]] = {}
    # Hold the mirror's only lock: recalls on a fresh mirror must not need it.
    with memory.mirror._lock:
        threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, [
            h.id for h in memory.recall("garden shelf moved by Ben", namespace="p")]))
            for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        stuck = [t for t in threads if t.is_alive()]
    assert not stuck, "a recall waited for the mirror's lock while scoring"
    assert all(results[i] == expected for i in range(4))


def test_the_budget_evicts_and_an_oversize_namespace_is_streamed(memory: Memory) -> None:
    _fill(memory, "a", 50)
    _fill(memory, "b", 50)
    space, table = _table(memory)
    query = memory.embedder.encode(["the kitchen item on shelf 4"])[0]
    conn = memory.db.conn()
    full = VectorMirror()
    exact = {ns: full.scores(conn, space, table, [ns], query) for ns in ("a", "b")}  # type: ignore[arg-type]
    per_row = _Slice.bytes_per_row(384)
    small = VectorMirror(budget_bytes=per_row * 300)  # room for one namespace's slice only
    for ns in ("a", "b"):
        rowids, scores, _, _ = small.scores(conn, space, table, [ns], query)  # type: ignore[arg-type]
        assert np.array_equal(rowids, exact[ns][0]) and np.allclose(scores, exact[ns][1])
    assert list(k[1] for k in small._slices) == ["b"] and small.nbytes <= small.budget_bytes
    tiny = VectorMirror(budget_bytes=per_row * 10)  # smaller than any namespace: streamed
    rowids, scores, low, high = tiny.scores(conn, space, table, ["a"], query)  # type: ignore[arg-type]
    assert not tiny._slices and np.array_equal(rowids, exact["a"][0])
    # float16 in the mirror vs float32 streamed from the table: cosines within 2e-3.
    assert float(np.abs(scores - exact["a"][1]).max()) < 2e-3
    assert low <= float(scores.min()) and high >= float(scores.max())
