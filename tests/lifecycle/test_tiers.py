"""The cold tier, TTL expiry, promotion, keyword-only status, background safe band, CLI."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.core import clock
from tests.clirun import Completed, invoke

NS = "project:tiers"


def keyword(home: Path, **extra: object) -> Settings:
    return Settings(home=home, embedding_model="none", **extra)  # type: ignore[arg-type]


def _expiring(memory: Memory, minutes: float = -5) -> tuple[str, str]:
    past = clock.format_time(clock.now() + timedelta(minutes=minutes))
    gone = memory.store("The lobby door is locked for the fire drill today.", namespace=NS,
                        metadata={"expires_at": past})
    kept = memory.store("The lobby door code is 4711.", namespace=NS)
    return gone, kept


def test_expired_memory_goes_cold_and_comes_back_when_promoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory(settings=keyword(tmp_path / "home")) as memory:
        gone, kept = _expiring(memory, minutes=60)
        then = clock.now()  # valid then: as_of that moment still sees it
        later = then + timedelta(hours=2)
        monkeypatch.setattr(clock, "now", lambda: later)
        report = memory.maintain(NS, apply=True)
        assert [(a.kind, a.state) for a in report.actions] == [("expire", "done")]
        assert report.notes  # says the dense stages are off here
        assert [h.id for h in memory.recall("lobby door", namespace=NS)] == [kept]
        assert gone in [h.id for h in memory.recall("lobby door", namespace=NS,
                                                    include_archived=True)]
        assert gone in [r.id for r in memory.search(namespace=NS, include_archived=True)]
        assert gone in [h.id for h in memory.recall("lobby door", namespace=NS, as_of=then)]
        assert memory.promote(gone, namespace=NS).restored
        assert gone in [h.id for h in memory.recall("lobby door", namespace=NS)]
        assert not memory.promote(gone, namespace=NS).restored  # already active
        actions = [e.action for e in memory.audit_history(gone)]
        assert "lifecycle.archive" in actions and "lifecycle.restore" in actions
        status = memory.maintenance_status(NS)
        assert status.near_duplicates.startswith("off: no embedding model")
        stages = {s.name: s for s in memory.status().stages}
        assert stages["lifecycle"].live and not stages["near-duplicates"].live
        assert "no embedding model" in stages["near-duplicates"].detail
        assert status.namespaces[0].last_run_status == "done"


def test_background_runs_only_the_safe_band(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(settings=keyword(home)) as memory:
        gone, _ = _expiring(memory)
        memory.store("A wrong belief to demote.", namespace=NS)
    with Memory(settings=keyword(home, auto_maintenance=True)) as memory:
        background = memory.internals.services.lifecycle.background
        assert background is not None
        deadline = time.monotonic() + 60
        while background.runs == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert memory.get(gone, namespace=NS).status == "archived"
        assert memory.review_queue(NS) == []  # never proposals unattended
        (row,) = memory.maintenance_status(NS).namespaces
        assert row.last_run_mode == "auto"


def cli(home: Path, *args: str) -> Completed:
    return invoke(home, *args)  # keyword-only, in process


def test_cli_maintain_feedback_promote(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(settings=keyword(home)) as memory:
        gone, kept = _expiring(memory)
    dry = cli(home, "maintain", "-n", NS, "--json")
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout)
    assert report["dry_run"] and report["actions"][0]["state"] == "planned"
    applied = cli(home, "maintain", "-n", NS, "--apply")
    assert applied.returncode == 0 and "1 done" in applied.stdout
    feedback = cli(home, "feedback", kept, "helpful", "-n", NS, "--json")
    assert json.loads(feedback.stdout)["estimate"] == 0.5
    bad = cli(home, "feedback", kept, "great", "-n", NS)
    assert bad.returncode == 2
    missing = cli(home, "feedback", "nope", "helpful", "-n", NS)
    assert missing.returncode == 1 and "no memory" in missing.stderr
    status = cli(home, "maintenance-status", "--json")
    assert json.loads(status.stdout)["namespaces"][0]["archived"] == 1
    promoted = cli(home, "promote", gone, "-n", NS)
    assert promoted.returncode == 0 and "promoted" in promoted.stdout
    consolidate = cli(home, "consolidate", "-n", NS, "--dry-run", "--json")
    assert json.loads(consolidate.stdout)["notes"]  # no model here: says so
