from __future__ import annotations

import io
import stat
from pathlib import Path

import pytest

from aide_memoire import AsyncMemory, InvalidInput, Memory, NotFound


def test_store_get_recall_forget(memory: Memory) -> None:
    memory_id = memory.store(
        "The deploy script lives in ops/deploy.sh",
        namespace="project:app",
        kind="learning",
        tags=["ops", "deploy"],
        importance=0.8,
        metadata={"ticket": 42},
        source="test",
        observed_at="2024-05-08T13:56:00Z",
    )
    record = memory.get(memory_id, namespace="project:app")
    assert record.content == "The deploy script lives in ops/deploy.sh"
    assert record.kind == "learning"
    assert record.tags == ["ops", "deploy"]
    assert record.metadata == {"ticket": 42}
    assert record.observed_at is not None and record.observed_at.year == 2024

    hits = memory.recall("where does the deploy script live?", namespace="project:app")
    assert [h.id for h in hits] == [memory_id]
    assert hits[0].metadata == {"ticket": 42}
    assert hits[0].ranks["bm25"] == 1

    assert memory.forget(memory_id, namespace="project:app") is True
    assert memory.recall("deploy script", namespace="project:app") == []
    assert memory.forget(memory_id, namespace="project:app") is False
    with pytest.raises(NotFound):
        memory.get(memory_id, namespace="project:app")


def test_exact_repeat_returns_existing_id(memory: Memory) -> None:
    first = memory.store("Use pnpm, not npm, in this repo", namespace="p")
    again = memory.store("Use pnpm, not npm, in this repo", namespace="p")
    other_ns = memory.store("Use pnpm, not npm, in this repo", namespace="q")
    assert first == again
    assert other_ns != first
    assert memory.status().namespaces == {"p": 1, "q": 1}


def test_namespaces_do_not_mix(memory: Memory) -> None:
    memory.store("postgres runs on port 5433 here", namespace="a")
    memory.store("postgres runs on port 5432 there", namespace="b")
    assert [h.content for h in memory.recall("postgres port", namespace="a")] == [
        "postgres runs on port 5433 here"
    ]
    both = memory.recall("postgres port", namespace=["a", "b"])
    assert {h.namespace for h in both} == {"a", "b"}


def test_recall_ranks_the_better_match_first(memory: Memory) -> None:
    memory.store("The cat sat on the mat", namespace="n")
    best = memory.store("Redis cache eviction uses the allkeys-lru policy", namespace="n")
    memory.store("Redis is used for sessions", namespace="n")
    hits = memory.recall("redis eviction policy", namespace="n")
    assert hits[0].id == best
    assert hits[-1].content == "The cat sat on the mat"
    assert "bm25" not in hits[-1].ranks


def test_search_filters_newest_first(memory: Memory) -> None:
    old = memory.store("old", namespace="n", tags=["x"], observed_at="2020-01-01")
    new = memory.store("new", namespace="n", tags=["x", "y"], importance=0.9,
                       observed_at="2024-01-01")
    memory.store("other", namespace="n", kind="fact", observed_at="2022-01-01")
    assert [r.id for r in memory.search(namespace="n", tags=["x"])] == [new, old]
    assert [r.id for r in memory.search(namespace="n", tags=["y"])] == [new]
    assert [r.id for r in memory.search(namespace="n", min_importance=0.8)] == [new]
    assert [r.content for r in memory.search(namespace="n", kinds=["fact"])] == ["other"]
    assert [r.id for r in memory.search(namespace="n", since="2023-06-01")] == [new]
    assert [r.id for r in memory.search(namespace="n", until="2021-01-01")] == [old]
    assert len(memory.search(namespace="n", limit=1)) == 1


def test_update_reindexes(memory: Memory) -> None:
    memory_id = memory.store("We use MySQL", namespace="n")
    updated = memory.update(memory_id, namespace="n", content="We use PostgreSQL", tags=["db"])
    assert updated.content == "We use PostgreSQL"
    assert all("bm25" not in h.ranks for h in memory.recall("mysql", namespace="n"))
    assert memory.recall("postgresql", namespace="n")[0].ranks["bm25"] == 1
    with pytest.raises(InvalidInput):
        memory.update(memory_id, namespace="n")
    with pytest.raises(NotFound):
        memory.update("nope", namespace="n", content="x")


def test_export_import_round_trip(memory: Memory, tmp_path: Path) -> None:
    memory.store("one", namespace="a", tags=["t"], metadata={"k": [1, 2]})
    memory.store("two", namespace="b", observed_at="2023-03-04T05:06:07Z")
    buffer = io.StringIO()
    assert memory.export(buffer) == 2
    lines = buffer.getvalue().splitlines()

    with Memory(tmp_path / "other") as target:
        report = target.import_(lines)
        assert (report.read, report.added, report.skipped) == (2, 2, 0)
        again = target.import_(lines)
        assert (again.added, again.skipped) == (0, 2)
        copy = io.StringIO()
        target.export(copy)
    assert copy.getvalue() == buffer.getvalue()


def test_import_rejects_garbage(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="line 1 is not JSON"):
        memory.import_(["{not json"])
    with pytest.raises(InvalidInput, match="not a memory"):
        memory.import_(['{"id": "x"}'])
    assert memory.status().memories == 0


def test_files_are_private(home: Path) -> None:
    with Memory(home) as m:
        m.store("secretless but private", namespace="n")
    assert stat.S_IMODE((home / "memory.db").stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


def test_status_reports_driver_and_stages(memory: Memory) -> None:
    report = memory.status()
    assert report.journal_mode == "wal"
    assert report.db_driver in {"sqlean", "pysqlite3", "sqlite3"}
    assert report.db_engine.startswith("SQLite 3.")
    assert {s.name for s in report.stages} >= {"keyword"}


def test_home_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIDE_MEMOIRE_HOME", str(tmp_path / "envhome"))
    with Memory() as m:
        m.store("x y z", namespace="n")
    assert (tmp_path / "envhome" / "memory.db").exists()


async def test_async_memory(home: Path) -> None:
    async with AsyncMemory(home) as m:
        memory_id = await m.store("async stored text", namespace="n")
        hits = await m.recall("stored text", namespace="n")
        assert [h.id for h in hits] == [memory_id]
        assert (await m.get(memory_id, namespace="n")).content == "async stored text"
        assert await m.forget(memory_id, namespace="n")
        assert (await m.status()).memories == 0


def test_access_statistics_are_batched_and_flushed_on_close(home: Path) -> None:
    with Memory(home) as m:
        memory_id = m.store("the staging database password rotates monthly", namespace="n")
        m.recall("staging database", namespace="n")
        m.recall("database rotation", namespace="n")
        # Not yet written: a recall does not pay for a write of its own.
        assert m.get(memory_id, namespace="n").access_count == 0
    with Memory(home) as m:
        record = m.get(memory_id, namespace="n")
        assert record.access_count == 2
        assert record.last_accessed_at is not None


def test_recall_as_of_answers_from_what_was_valid_then(memory: Memory) -> None:
    old = memory.store("The team deploys with Jenkins", namespace="n")
    before = memory.get(old, namespace="n").created_at
    new = memory.store("The team deploys with GitHub Actions", namespace="n")
    # Close the old memory as a later supersession would (the facts issue automates this).
    with memory.internals.db.write() as tx:
        tx.execute(
            "UPDATE memories SET status = 'superseded', valid_to = ?, superseded_by = ? "
            "WHERE id = ?",
            (memory.get(new, namespace="n").created_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
             new, old),
        )
    now_ids = [h.id for h in memory.recall("how does the team deploy", namespace="n")]
    assert now_ids == [new]
    then_ids = [h.id for h in memory.recall("how does the team deploy", namespace="n",
                                             as_of=before)]
    assert then_ids == [old]


def test_very_common_words_do_not_hide_the_rare_one(tmp_path: Path) -> None:
    from dataclasses import replace

    with Memory(tmp_path / "h", settings=None) as m:
        m.internals.recaller.tuning = replace(
            m.internals.recaller.tuning, prune_above=100, common_floor=50, common_share=0.05
        )
        m.store_many(
            [{"content": f"deploy report {i}: the deploy went fine"} for i in range(200)],
            namespace="n",
        )
        lone = m.store("deploy checklist: check the dashboards first", namespace="n")
        target = m.store("deploy report for ticket ZX-77: rollback needed", namespace="n")
        hits = m.recall("deploy report ZX-77 rollback", namespace="n", limit=3)
        assert hits[0].id == target
        # One very common word beside rarer ones is left out of the keyword query.
        keyword_hits = m.recall("deploy ZX-77 rollback", namespace="n", limit=300)
        matched = [h.content for h in keyword_hits if "bm25" in h.ranks]
        assert matched and all("77" in c or "rollback" in c for c in matched)
        # Two or more count only together: a row with one of them is not a keyword match.
        keyword_hits = m.recall("deploy report ZX-77 rollback", namespace="n", limit=300)
        matched_ids = {h.id for h in keyword_hits if "bm25" in h.ranks}
        assert target in matched_ids and lone not in matched_ids
        assert len(matched_ids) == 201  # the 200 "deploy report" rows and the target
