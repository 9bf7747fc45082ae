"""The maintenance scenario over a generated store (real model, real SQLite file).

Planted: exact duplicates, a same-text copy with other tags, an expired memory, near
duplicates, stale, useful-but-old and wrong memories, and a cluster of related notes.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from aide_memoire import Memory
from aide_memoire.engine.core import clock
from aide_memoire.engine.core.errors import MaintenanceBusy, NotFound
from aide_memoire.engine.lifecycle import lease

from .conftest import NS, Planted, settings


def _files_digest(home: Path) -> str:
    digest = hashlib.sha256()
    for name in ("memory.db", "memory.db-wal"):
        path = home / name
        digest.update(path.read_bytes() if path.exists() else b"<none>")
    return digest.hexdigest()


def _rows(memory: Memory) -> list[tuple[Any, ...]]:
    return memory.internals.db.conn().execute(
        "SELECT id, content, status, tags, importance, valid_to, utility FROM memories "
        "ORDER BY rowid").fetchall()


def _archived(memory: Memory) -> set[str]:
    return {str(i) for (i,) in memory.internals.db.conn().execute(
        "SELECT id FROM memories WHERE status = 'archived'")}


def _proposals(memory: Memory, kind: str) -> list[Any]:
    return [i for i in memory.review_queue(NS, 1000) if i.kind == kind]


def test_dry_run_writes_nothing(scenario: Planted) -> None:
    with Memory(settings=settings(scenario.home)) as memory:
        memory.internals.db.conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        before = _files_digest(scenario.home)
        report = memory.maintain(NS)
        after = _files_digest(scenario.home)
    assert before == after
    assert report.dry_run and report.run_id is None
    kinds = {a.kind for a in report.actions}
    assert {"retire_duplicate", "expire", "merge", "demote", "consolidate"} <= kinds
    assert all(a.state == "planned" for a in report.actions)
    retired = {i for a in report.actions if a.kind == "retire_duplicate" for i in a.memory_ids[1:]}
    assert retired == scenario.duplicate_extras


def test_apply_retires_exactly_the_duplicates_and_stages_the_rest(scenario: Planted) -> None:
    with Memory(settings=settings(scenario.home)) as memory:
        report = memory.maintain(NS, apply=True)
        assert report.run_id is not None
        assert _archived(memory) == scenario.duplicate_extras | {scenario.expired}
        for extra in scenario.duplicate_extras:  # retired, not lost
            assert memory.get(extra, namespace=NS).status == "archived"
        merges = {(i.memory_id, i.evidence["into"]) for i in _proposals(memory, "merge")}
        assert set(scenario.near_pairs) <= merges
        assert scenario.tagged_copy in merges
        demoted = {i.memory_id for i in _proposals(memory, "demote")}
        assert scenario.stale | {scenario.wrong} <= demoted
        assert not demoted & scenario.useful_old
        assert not demoted & set(scenario.filler)
        (summary,) = _proposals(memory, "consolidate")
        assert set(summary.evidence["sources"]) == scenario.billing
        for item in memory.review_queue(NS, 1000):
            assert item.evidence.get("key") and item.expires_at is not None
        # A second run proposes nothing new: everything is staged already.
        again = memory.maintain(NS, apply=True)
        assert again.proposed == 0 and again.done == 0
        status = memory.maintenance_status(NS).namespaces[0]
        assert status.last_run_status == "done" and status.pending_proposals >= 9


def test_decisions_merge_consolidate_reject_and_expire(
    scenario: Planted, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory(settings=settings(scenario.home)) as memory:
        memory.maintain(NS, apply=True)
        new, existing = scenario.near_pairs[0]
        (item,) = [i for i in _proposals(memory, "merge") if i.memory_id == new]
        assert memory.review_decide(item.id, "approve").applied
        assert memory.get(new, namespace=NS).status == "archived"
        assert memory.get(existing, namespace=NS).status == "active"
        assert {"source": new, "target": existing, "kind": "merged_into"} in [
            {k: link[k] for k in ("source", "target", "kind")} for link in memory.links(new)]
        query = "deploy to production on Tuesday"
        assert new not in [h.id for h in memory.recall(query, namespace=NS)]
        assert new in [h.id for h in memory.recall(query, namespace=NS, include_archived=True)]

        (summary,) = _proposals(memory, "consolidate")
        assert memory.review_decide(summary.id, "approve").applied
        written = [r for r in memory.search(namespace=NS, kinds=["summary"])]
        assert len(written) == 1
        assert written[0].content.startswith("Summary of 4 memories")
        assert f"[{clock.now():%Y-%m-%d}]" in written[0].content
        assert all(memory.get(i, namespace=NS).status == "archived" for i in scenario.billing)

        demote = next(i for i in _proposals(memory, "demote"))
        before = _rows(memory)
        assert memory.review_decide(demote.id, "reject").applied
        assert _rows(memory) == before  # rejecting leaves the store as it was

        pending = _proposals(memory, "demote")[0]
        later = clock.now() + timedelta(days=31)
        monkeypatch.setattr(clock, "now", lambda: later)
        before = _rows(memory)
        decision = memory.review_decide(pending.id, "approve")
        assert not decision.applied
        assert decision.status == "expired" and "expired" in decision.message
        assert _rows(memory) == before  # an expired proposal does nothing
        swept = memory.maintain(NS, apply=True, auto_only=True)
        assert any(a.kind == "expire_proposals" and a.state == "done" for a in swept.actions)
        assert memory.review_queue(NS, 1000) == []


def test_stale_approved_proposal_is_refused_when_its_memories_moved(scenario: Planted) -> None:
    with Memory(settings=settings(scenario.home)) as memory:
        memory.maintain(NS, apply=True)
        new, existing = scenario.near_pairs[1]
        (item,) = [i for i in _proposals(memory, "merge") if i.memory_id == new]
        memory.forget(existing, namespace=NS)
        with pytest.raises(NotFound):
            memory.review_decide(item.id, "approve")
        assert memory.get(new, namespace=NS).status == "active"


def test_lease_keeps_a_second_runner_out_and_an_interrupted_run_is_consistent(
    scenario: Planted,
) -> None:
    with Memory(settings=settings(scenario.home)) as first, \
            Memory(settings=settings(scenario.home, embedding_model="none")) as second:
        seen: list[str] = []

        def step(action: Any) -> None:
            with pytest.raises(MaintenanceBusy):
                second.maintain(NS, apply=True, auto_only=True)
            seen.append(action.kind)
            if len(seen) == 2:
                raise KeyboardInterrupt  # cut the run short between two steps

        from aide_memoire.engine.lifecycle import runner

        with pytest.raises(KeyboardInterrupt):
            runner.maintain(first.internals.context, NS, apply=True, auto_only=True, step=step)
        assert lease.holder(first.internals.db.conn(), NS) is None
        archived = _archived(first)
        # Whole steps only: each duplicate group is retired entirely or not at all.
        groups = [a for a in first.maintain(NS).actions if a.kind == "retire_duplicate"]
        assert len(groups) == 3
        assert len(archived) == len(scenario.duplicate_extras) - sum(
            len(g.memory_ids) - 1 for g in groups)
        status = first.maintenance_status(NS).namespaces[0]
        assert status.last_run_status == "failed"
        second.maintain(NS, apply=True, auto_only=True)
        assert _archived(first) == scenario.duplicate_extras | {scenario.expired}
