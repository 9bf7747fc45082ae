"""Hybrid recall with the real packaged model and sqlite-vec."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings, StoreError
from aide_memoire.engine.storage.db import SqliteDatabase


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    memory = Memory(tmp_path_factory.mktemp("hybrid"))
    assert memory.internals.embedder.wait(), memory.internals.embedder.error
    return memory


def _dense_count(memory: Memory) -> int:
    space = memory.internals.embedder.space
    assert space is not None
    table = memory.internals.tables.table_name(space)
    return int(memory.internals.db.conn().execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_status_says_dense_is_live(hybrid: Memory) -> None:
    stage = {s.name: s for s in hybrid.status().stages}["dense"]
    assert stage.live
    assert "384-d" in stage.detail and "sqlite-vec" in stage.detail


def test_paraphrase_found_only_by_dense(hybrid: Memory) -> None:
    ns = "para"
    target = hybrid.store("The feline dozed on the rug all afternoon", namespace=ns)
    hybrid.store("Quarterly revenue grew by four percent", namespace=ns)
    hybrid.store("The train to Lyon leaves at nine", namespace=ns)
    hits = hybrid.recall("cat sleeping on a carpet", namespace=ns, limit=3)
    assert hits[0].id == target
    assert "bm25" not in hits[0].ranks
    assert hits[0].ranks["dense"] == 1


def test_exact_identifier_found_by_bm25(hybrid: Memory) -> None:
    ns = "ident"
    target = hybrid.store("Error XJ-4471 means the cache shard is cold", namespace=ns)
    for code in ("QP-9902", "ZK-1187", "MM-3310", "AB-5521"):
        hybrid.store(f"Error {code} means the cache shard is cold", namespace=ns)
    hits = hybrid.recall("XJ-4471", namespace=ns, limit=5)
    assert hits[0].id == target
    assert hits[0].ranks["bm25"] == 1
    assert all("bm25" not in h.ranks for h in hits[1:])


def test_fusion_finds_both_kinds(hybrid: Memory) -> None:
    ns = "both"
    lexical = hybrid.store("Set PGBOUNCER_POOL=40 before the migration", namespace=ns)
    semantic = hybrid.store("The database connection pooler must allow forty clients", namespace=ns)
    for i in range(8):
        hybrid.store(f"Unrelated note {i} about the office plants and lunch", namespace=ns)
    hits = hybrid.recall("PGBOUNCER_POOL connection limit", namespace=ns, limit=3)
    assert {lexical, semantic} <= {h.id for h in hits}
    by_id = {h.id: h for h in hits}
    assert "bm25" in by_id[lexical].ranks and "dense" in by_id[semantic].ranks


def test_reply_found_by_its_context(hybrid: Memory) -> None:
    ns = "conv"
    ids = hybrid.store_conversation(
        [
            {"speaker": "Caroline", "content": "I finally hiked the Grand Canyon rim trail!"},
            {"speaker": "Melanie", "content": "Wow! What did it look like at sunrise?"},
            {"speaker": "Caroline", "content": "Red and gold, like the walls were on fire."},
            {"speaker": "Melanie", "content": "My kids started swimming lessons this week."},
        ],
        namespace=ns,
        session_id="s1",
        observed_at="2023-05-08T13:56:00Z",
    )
    hits = hybrid.recall("How did the Grand Canyon look to Caroline?", namespace=ns, limit=3)
    assert ids[2] in [h.id for h in hits]
    reply = hybrid.get(ids[2], namespace=ns)
    assert reply.reply_to == ids[1]
    by_context = hybrid.recall("what did it look like at sunrise", namespace=ns, limit=2)
    assert ids[2] in [h.id for h in by_context]


def test_dense_and_keyword_only_modes_reproduce_each_side(hybrid: Memory) -> None:
    ns = "para"
    tuning = hybrid.internals.recaller.tuning
    try:
        hybrid.internals.recaller.tuning = replace(tuning, keyword_weight=0.0)
        dense_only = hybrid.recall("cat sleeping on a carpet", namespace=ns, limit=3)
        assert [h.ranks.get("dense") for h in dense_only] == [1, 2, 3]
    finally:
        hybrid.internals.recaller.tuning = tuning


def test_forget_and_update_keep_vectors_in_step(hybrid: Memory) -> None:
    ns = "vec"
    before = _dense_count(hybrid)
    memory_id = hybrid.store("Kubernetes namespaces isolate the staging cluster", namespace=ns)
    assert _dense_count(hybrid) == before + 1
    hybrid.update(memory_id, namespace=ns, content="Our bakery sells sourdough on Fridays")
    hits = hybrid.recall("bread shop weekly loaf", namespace=ns, limit=1)
    assert hits and hits[0].id == memory_id and "dense" in hits[0].ranks
    assert _dense_count(hybrid) == before + 1
    hybrid.forget(memory_id, namespace=ns)
    assert _dense_count(hybrid) == before
    assert hybrid.recall("bread shop weekly loaf", namespace=ns) == []


def test_other_process_writes_are_seen(hybrid: Memory) -> None:
    with Memory(hybrid.settings.home) as other:
        first = other.store("The espresso machine descales every March", namespace="x")
        assert hybrid.recall("coffee maker maintenance", namespace="x")[0].id == first
        other.forget(first, namespace="x")
        second = other.store("Office plants are watered on Tuesdays", namespace="x")
    hits = hybrid.recall("coffee maker maintenance", namespace="x")
    assert first not in [h.id for h in hits]
    assert hybrid.recall("greenery watering day", namespace="x")[0].id == second


def test_old_row_found_among_ten_thousand(tmp_path: Path) -> None:
    with Memory(tmp_path / "big") as memory:
        target = memory.store("The vault combination is kept by Ingrid Oyelaran", namespace="big")
        for start in range(0, 10_000, 2_000):
            memory.store_many(
                [
                    {"content": f"log line {i}: job {i % 97} finished"}
                    for i in range(start, start + 2_000)
                ],
                namespace="big",
            )
        assert memory.status().namespaces["big"] == 10_001
        hits = memory.recall("who keeps the vault combination?", namespace="big", limit=5)
        assert hits[0].id == target
        assert hits[0].ranks.get("dense") == 1 and hits[0].ranks.get("bm25") == 1


def test_model_absent_means_keyword_only(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "h", embedding_model=str(tmp_path / "no-such-model"))
    with Memory(settings=settings) as memory:
        memory_id = memory.store("Keyword recall still works without a model", namespace="n")
        assert [h.id for h in memory.recall("keyword recall", namespace="n")] == [memory_id]
        stage = {s.name: s for s in memory.status().stages}["dense"]
        assert not stage.live
        assert "keyword-only" in stage.detail and "no-such-model" in stage.detail


def test_driver_without_extensions_means_keyword_only(tmp_path: Path) -> None:
    import sqlite3

    settings = Settings(home=tmp_path / "h", sqlite_driver="sqlite3")
    if tuple(int(p) for p in sqlite3.sqlite_version.split(".")) < (3, 43, 0):
        with pytest.raises(StoreError, match="older than 3.43.0.*Install 'sqlean.py'"):
            Memory(settings=settings)
        return
    with Memory(settings=settings) as memory:
        memory.store("plain sqlite3 store", namespace="n")
        hits = memory.recall("plain store", namespace="n")
        stage = {s.name: s for s in memory.status().stages}["dense"]
        assert isinstance(memory.internals.db, SqliteDatabase)
        if memory.internals.db.driver.can_load_extensions:
            assert stage.live and "dense" in hits[0].ranks
        else:
            assert hits[0].ranks == {"bm25": 1}
            assert not stage.live and "cannot load extensions" in stage.detail


def test_a_big_namespace_is_shortlisted_by_sign_bits_then_scored_exactly(
    hybrid: Memory,
) -> None:
    """Above shortlist_above rows, sign bits pick the rows that get an exact cosine; the
    best hits and every keyword match must come out as the exact scan ranks them."""
    ns = "shortlist"
    topics = ["the build cache", "the payroll export", "a flaky login test", "the VPN",
              "our on-call rota", "the invoice PDF", "the search index", "Kafka lag"]
    people = ["Ana", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ivy", "Jo"]
    hybrid.store_many(
        [{"content": f"{p} looked into {t} on day {d} and wrote down what broke"}
         for d in range(5) for p in people for t in topics],
        namespace=ns,
    )  # 400 rows
    rare = hybrid.store("Zebra-7 token rotation is owned by the platform team", namespace=ns)
    queries = ["who owns the token rotation", "problems with the payroll export",
               "Kafka consumer lag on day 3", "Zebra-7"]
    exact_tuning = replace(hybrid.internals.recaller.tuning, shortlist_above=None)
    short_tuning = replace(hybrid.internals.recaller.tuning, shortlist_above=100, shortlist=120)
    for query in queries:
        hybrid.internals.recaller.tuning = exact_tuning
        exact = hybrid.recall(query, namespace=ns, limit=5)
        hybrid.internals.recaller.tuning = short_tuning
        short = hybrid.recall(query, namespace=ns, limit=5)
        hybrid.internals.recaller.tuning = exact_tuning
        assert [h.id for h in short][:3] == [h.id for h in exact][:3], query
        for a, b in zip(short, exact, strict=False):
            if a.id == b.id and "dense" in a.scores:
                assert a.scores["dense"] == pytest.approx(b.scores["dense"], abs=1e-6)
    hybrid.internals.recaller.tuning = short_tuning
    try:
        hits = hybrid.recall("Zebra-7", namespace=ns, limit=3)
    finally:
        hybrid.internals.recaller.tuning = exact_tuning
    assert hits[0].id == rare and "dense" in hits[0].scores  # keyword match scored exactly
