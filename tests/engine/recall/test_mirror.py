"""The vector mirror: one bounded copy shared by recall and near duplicates,
scored with no lock held (real model, real SQLite, real sqlite-vec)."""

from __future__ import annotations

import importlib
import mmap
import threading
from typing import Any

import numpy as np

from aide_memoire import Memory
from aide_memoire.engine.recall.mirror import VectorMirror, _Slice, sign_bits
from aide_memoire.engine.storage.portable.vectors import PortableVectorReads

TOPICS = ["deploy", "billing", "kitchen", "garden", "travel", "music", "sport", "health"]


def _fill(memory: Memory, namespace: str, count: int) -> None:
    memory.store_many(
        [{"content": f"Note {n} about {TOPICS[n % len(TOPICS)]}: item {n * 7919 % 1000} "
                     f"was moved to shelf {n % 13} by {['Ana', 'Ben', 'Cy'][n % 3]}"}
         for n in range(count)], namespace=namespace)


def _table(memory: Memory) -> tuple[object, str]:
    space = memory.internals.embedder.space
    assert space is not None
    return space, memory.internals.tables.table_name(space)


def test_recall_and_near_duplicates_share_one_mirror(memory: Memory) -> None:
    _fill(memory, "p", 40)
    memory.recall("who moved the billing item", namespace="p")
    near = memory.internals.services.lifecycle.near_duplicates
    assert near.mirror is memory.internals.recaller.cache is memory.internals.mirror
    (only,) = memory.internals.mirror._slices.values()
    assert only.view.size == 40
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
    with memory.internals.mirror._lock:
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
    query = memory.internals.embedder.encode(["the kitchen item on shelf 4"])[0]
    conn = memory.internals.db.conn()
    reads = memory.internals.tables
    full = VectorMirror(reads)
    exact = {ns: full.scores(conn, space, table, [ns], query) for ns in ("a", "b")}  # type: ignore[arg-type]
    per_row = _Slice.bytes_per_row(384)
    small = VectorMirror(reads, budget_bytes=per_row * 300)  # room for one namespace's slice only
    for ns in ("a", "b"):
        rowids, scores, _, _ = small.scores(conn, space, table, [ns], query)  # type: ignore[arg-type]
        assert np.array_equal(rowids, exact[ns][0]) and np.allclose(scores, exact[ns][1])
    assert list(k[1] for k in small._slices) == ["b"] and small.nbytes <= small.budget_bytes
    tiny = VectorMirror(reads, budget_bytes=per_row * 10)  # smaller than any namespace: streamed
    rowids, scores, low, high = tiny.scores(conn, space, table, ["a"], query)  # type: ignore[arg-type]
    assert not tiny._slices and np.array_equal(rowids, exact["a"][0])
    # Streamed from the table (no neighbour smoothing; these are notes): the same cosines.
    assert np.allclose(scores, exact["a"][1], atol=1e-6)
    assert low <= float(scores.min()) and high >= float(scores.max())


def test_a_slice_keeps_one_copy_and_scores_a_big_one_through_its_shortlist() -> None:
    rng = np.random.default_rng(3)
    raw = rng.standard_normal((25_000, 384)).astype(np.float32)
    raw /= np.linalg.norm(raw, axis=1, keepdims=True)
    piece = _Slice(384)
    rows = [(i + 1, raw[i].tobytes(), None, None, "note") for i in range(len(raw))]
    piece.append(rows[:20_000], lambda session, low, high: [], lambda ids: {})
    piece.append(rows[20_000:], lambda session, low, high: [], lambda ids: {})
    view = piece.view
    assert view.size == len(raw) and view.vectors.blocks[0].shape[1] == 384
    assert piece.nbytes < 1.6 * len(raw) * _Slice.bytes_per_row(384)  # one copy, growth slack
    query = raw[7]
    bits = sign_bits(query[None, :], 6)[0]
    rowids, scores, _, high = piece.search(query, bits, np.zeros(0, np.int64), None)
    assert np.array_equal(rowids, np.arange(1, len(raw) + 1))
    # Each row is kept as int8 at its own scale (largest component = 127): the score is
    # that row's cosine, within 0.003 of the float32 one.
    scale = np.abs(raw).max(axis=1) / 127
    kept = np.rint(raw / scale[:, None]).astype(np.int8).astype(np.float32) * scale[:, None]
    assert np.allclose(scores, kept @ query, atol=1e-5)
    assert np.abs(scores - raw @ query).max() < 0.003 and abs(high - 1.0) < 0.003
    assert piece.nbytes < 0.3 * len(raw) * 4 * 384  # under a third of a float32 copy
    shortlisted, _, _, _ = piece.search(query, bits, np.array([20_123]), 300)
    assert {8, 20_123} <= set(shortlisted.tolist())  # the row itself, and a must-score row


def _mapping_of(array: np.ndarray) -> object:
    base: object = array
    while isinstance(base, np.ndarray):
        base = base.base
    return base.obj if isinstance(base, memoryview) else base


def test_a_big_slice_keeps_its_arrays_in_mappings_of_their_own() -> None:
    """From 4 MB an array of a slice is an anonymous mapping advised to use huge pages
    (where the system has the advice): zeroed, writable, its own; smaller ones are plain."""
    mirror = importlib.import_module("aide_memoire.engine.recall.mirror")
    big = mirror._zeros((16_384, 384), np.int8)
    assert big.shape == (16_384, 384) and big.dtype == np.int8 and not big.any()
    big[-1, -1] = 7
    assert int(big.sum()) == 7
    small = mirror._zeros(1_000, np.int64)
    assert not small.any() and small.flags.writeable and _mapping_of(small) is None
    if hasattr(mmap, "MADV_HUGEPAGE"):
        assert isinstance(_mapping_of(big), mmap.mmap)
    else:
        assert _mapping_of(big) is None
    # A slice past the size keeps its vectors and bits that way and scores as before
    # (the 25,000-row test above checks its scores against the int8 rows).
    piece = _Slice(384)
    rows = np.full((17_000, 384), 1 / np.sqrt(384), np.float32)
    piece.append([(i + 1, rows[i].tobytes(), None, None, "note") for i in range(len(rows))],
                 lambda session, low, high: [], lambda ids: {})
    view = piece.view
    assert view.vectors.blocks[0].shape == (16_384, 384)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        assert isinstance(_mapping_of(view.vectors.blocks[0]), mmap.mmap)
    _, scores, _, _ = piece.search(rows[0], sign_bits(rows[:1], 6)[0], np.zeros(0, np.int64),
                                   None)
    assert np.allclose(scores, 1.0, atol=0.003)


def test_a_big_slice_splits_its_sign_bit_pass_and_ranks_the_same(monkeypatch: Any) -> None:
    mirror = importlib.import_module("aide_memoire.engine.recall.mirror")
    rng = np.random.default_rng(11)
    raw = rng.standard_normal((6_001, 384)).astype(np.float32)
    raw /= np.linalg.norm(raw, axis=1, keepdims=True)
    piece = _Slice(384)
    piece.append([(i + 1, raw[i].tobytes(), None, None, "note") for i in range(len(raw))],
                 lambda session, low, high: [], lambda ids: {})
    query = rng.standard_normal(384).astype(np.float32)
    query /= np.linalg.norm(query)
    bits = sign_bits(query[None, :], 6)[0]
    must = np.array([5_999])
    whole = piece.search(query, bits, must, 500)
    # The distances themselves, row by row, against numpy's own count of differing bits.
    signs = np.unpackbits(piece.view.bits[:, : len(raw)].T.copy().view(np.uint8), axis=1)
    expected = (signs != np.unpackbits(bits.view(np.uint8))).sum(axis=1)
    assert np.array_equal(mirror._distances(piece.view.bits, bits, len(raw)), expected)
    monkeypatch.setattr(mirror, "_SPLIT_ROWS", 1_000)  # two halves from 1,000 rows on
    assert np.array_equal(mirror._distances(piece.view.bits, bits, len(raw)), expected)
    halves = piece.search(query, bits, must, 500)
    assert np.array_equal(whole[0], halves[0]) and np.array_equal(whole[1], halves[1])
    assert whole[2:] == halves[2:] and 5_999 in set(halves[0].tolist())


def test_four_dense_recalls_are_inside_scoring_at_once(memory: Memory) -> None:
    """No lock is held while scoring: four threads meet at a barrier the mirror's
    scoring hook waits on. Were scoring serialised, the first thread would wait there
    holding it and the barrier would break; wall-time ratios are in bench/parallel_recall.py."""
    _fill(memory, "p", 80)
    queries = ["garden shelf moved by Ben", "who moved the billing item", "kitchen notes",
               "travel item on shelf 3"]
    expected = {q: [h.id for h in memory.recall(q, namespace="p")] for q in queries}
    barrier = threading.Barrier(len(queries), timeout=60)
    inside: list[str] = []

    def meet() -> None:
        inside.append(threading.current_thread().name)
        barrier.wait()

    results: dict[str, list[str]] = {}
    errors: list[BaseException] = []

    def run(query: str) -> None:
        try:
            results[query] = [h.id for h in memory.recall(query, namespace="p")]
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    memory.internals.mirror.on_scoring = meet
    try:
        threads = [threading.Thread(target=run, args=(q,), name=f"recall-{i}")
                   for i, q in enumerate(queries)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    finally:
        memory.internals.mirror.on_scoring = None
    assert not errors, f"the four recalls were not scoring at the same time: {errors!r}"
    assert sorted(inside) == sorted(t.name for t in threads)
    assert results == expected  # and scoring together changed no result


def test_a_mirror_that_followed_the_store_scores_as_one_just_opened(memory: Memory) -> None:
    """The same store gets the same scores, to the bit, from the mirror that followed
    every write (appends, a session's turns re-smoothing older neighbours, a forget
    that reloads) and from one that reads it all at once."""
    running = memory.internals.mirror
    query = memory.internals.embedder.encode(["who moved the garden item to shelf 4"])[0]
    first = _fill_ids(memory, "p", 30)
    space, table = _table(memory)
    memory.store_conversation([{"speaker": "Ana", "content": "I moved the garden tools."},
                               {"speaker": "Ben", "content": "To which shelf?"}],
                              namespace="p", session_id="s1")
    memory.recall("garden", namespace="p")  # the running mirror loads what is there
    memory.forget(first[3], namespace="p")
    # A new text for an early row: its vector leaves vec0's insertion order (rowid order),
    # so a cold load meets a row out of order and reads the partition again, sorted.
    memory.update(first[5], namespace="p", content="The garden rake now hangs on shelf 9.")
    memory.recall("garden", namespace="p")
    for n in range(3):
        memory.store_conversation([{"speaker": "Ana", "content": f"Shelf {n + 4}, by the door."}],
                                  namespace="p", session_id="s1")
        _fill_ids(memory, "p", 7)
        memory.recall("garden", namespace="p")  # appends only: the turn before re-smoothed
    conn = memory.internals.db.conn()
    fresh = VectorMirror(PortableVectorReads())  # from vec0, as a store before the blocks
    loads: list[bool] = []
    cold = fresh._cold

    def counted(*args: Any, **kwargs: Any) -> Any:
        loads.append(kwargs["ordered"])
        return cold(*args, **kwargs)

    fresh._cold = counted  # type: ignore[method-assign]
    for exact_up_to, shortlist in ((None, 3000), (10, 12)):
        got = running.scores(conn, space, table, ["p"], query,  # type: ignore[arg-type]
                             exact_up_to=exact_up_to, shortlist=shortlist)
        want = fresh.scores(conn, space, table, ["p"], query,  # type: ignore[arg-type]
                            exact_up_to=exact_up_to, shortlist=shortlist)
        assert len(got[0]) >= 12 and np.array_equal(got[0], want[0])
        assert np.array_equal(got[1], want[1]) and got[2:] == want[2:]
    assert loads == [False, True]  # out of order once, then sorted: the same scores


def _fill_ids(memory: Memory, namespace: str, count: int) -> list[str]:
    start = sum(s.view.size for s in memory.internals.mirror._slices.values())
    return memory.store_many(
        [{"content": f"Note {n} about {TOPICS[n % len(TOPICS)]}: item {n * 7919 % 1000} "
                     f"was moved to shelf {n % 13}"} for n in range(start, start + count)],
        namespace=namespace)


def _state_of(memory: Memory, namespace: str) -> tuple[str, int, int, float] | None:
    space = memory.internals.embedder.space
    assert space is not None
    blocks: Any = memory.internals.tables.blocks  # type: ignore[attr-defined]
    return blocks.state(memory.internals.db.conn(), space.key,  # type: ignore[no-any-return]
                                                namespace)


def test_a_mirror_started_from_the_blocks_scores_as_one_read_from_vec0(memory: Memory) -> None:
    """The int8 blocks follow every write (appends, a turn re-smoothing its neighbour, a
    forget's tombstone, a replaced vector): a mirror loaded from them gives the same
    scores, to the bit, as one that scans vec0, and reads no vec0 partition."""
    first = _fill_ids(memory, "p", 25)
    memory.store_conversation([{"speaker": "Ana", "content": "I moved the garden tools."},
                               {"speaker": "Ben", "content": "To which shelf?"}],
                              namespace="p", session_id="s1")
    memory.forget(first[2], namespace="p")
    memory.update(first[4], namespace="p", content="The garden rake now hangs on shelf 9.")
    memory.store_conversation([{"speaker": "Ana", "content": "Shelf 4, by the door."}],
                              namespace="p", session_id="s1")
    state = _state_of(memory, "p")
    assert state is not None and state[0] == "live"
    space, table = _table(memory)
    conn = memory.internals.db.conn()
    query = memory.internals.embedder.encode(["who moved the garden item to shelf 4"])[0]
    from_blocks = VectorMirror(memory.internals.tables)
    scanned: list[bool] = []
    from_blocks._cold = lambda *a, **k: scanned.append(True)  # type: ignore[method-assign]
    from_vec0 = VectorMirror(PortableVectorReads())
    got = from_blocks.scores(conn, space, table, ["p"], query)  # type: ignore[arg-type]
    want = from_vec0.scores(conn, space, table, ["p"], query)  # type: ignore[arg-type]
    assert not scanned and len(got[0]) == 25 - 1 + 3
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert got[2:] == want[2:]


def test_blocks_missing_are_rebuilt_in_the_background_while_writes_go_on(
        memory: Memory) -> None:
    """A store from before the blocks (here: their state dropped) loads from vec0, and
    the blocks are rebuilt in the background; a write landing meanwhile is kept; then a
    new mirror starts from them with the same scores."""
    _fill_ids(memory, "p", 30)
    space, table = _table(memory)
    with memory.internals.db.write() as tx:
        memory.internals.tables.blocks.drop(tx, space.key)  # type: ignore[attr-defined]
    memory.recall("garden", namespace="p")  # loads from vec0, starts the rebuild
    _fill_ids(memory, "p", 5)
    memory.internals.mirror.wait_for_rebuilds(60)
    memory.recall("garden", namespace="p")
    memory.internals.mirror.wait_for_rebuilds(60)
    state = _state_of(memory, "p")
    assert state is not None and state[0] == "live"
    conn = memory.internals.db.conn()
    query = memory.internals.embedder.encode(["the kitchen item on shelf 4"])[0]
    from_blocks = VectorMirror(memory.internals.tables)
    scanned: list[bool] = []
    from_blocks._cold = lambda *a, **k: scanned.append(True)  # type: ignore[method-assign]
    got = from_blocks.scores(conn, space, table, ["p"], query)  # type: ignore[arg-type]
    want = VectorMirror(PortableVectorReads()).scores(conn, space, table, ["p"], query)  # type: ignore[arg-type]
    assert not scanned and len(got[0]) == 35
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
