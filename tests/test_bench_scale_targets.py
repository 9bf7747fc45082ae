"""bench/scale.py's targeted queries: a facts query shared by other memories of the store
cannot name its one target, so the targeted set replaces it by one that does (issue 28:
"queries that each target one memory"); ticket queries always do."""

from __future__ import annotations

from collections import Counter
from types import ModuleType

from tests.bench_modules import load_bench


def _scale() -> ModuleType:
    return load_bench("scale")


def test_every_targeted_query_names_one_memory_and_shared_ones_are_kept_apart() -> None:
    scale = _scale()
    from _bulk import item_rng

    size, seed = 20_000, 7
    items = [scale.make_item(item_rng(seed, n), n) for n in range(size)]
    alike = Counter(scale.facts_query(item) for item in items)
    ids = [f"id-{n}" for n in range(size)]
    targets = scale._targets(seed, size, ids, 120, scale._Ambiguity(seed, size))
    groups = Counter(t[3] for t in targets)
    # 20k memories already share some facts queries (15 projects x 15 components x 12
    # problems for an incident): the draw meets some, and each is replaced.
    assert groups["shared"] > 0
    assert groups["redrawn"] == groups["shared"]
    for memory_id, item, query, group in targets:
        assert ids[int(memory_id.removeprefix("id-"))] == memory_id
        assert items[int(memory_id.removeprefix("id-"))]["content"] == item["content"]
        if group == "ticket":
            assert query == scale.ticket_query(item)
        else:
            assert query == scale.facts_query(item)
            assert (alike[query] > 1) == (group == "shared")
    # The first 120 are the draw of earlier rounds, in its order.
    drawn = scale._targets(seed, size, ids, 120)
    assert [t[:3] for t in targets[:120]] == [t[:3] for t in drawn]
