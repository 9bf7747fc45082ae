"""Forget survives a crash: a process SIGKILLed between the delete's commit and the end
of its purge leaves the purge owed in the file, and the next open finishes it.

The kill is the real process killing itself at a named point of the shipped code
(``AIDE_MEMOIRE_CRASH_AT``, engine/crashpoints.py), not a copy of the code with a fault.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from aide_memoire import Memory
from aide_memoire.engine.core.crashpoints import CRASH_ENV

from .conftest import cli, keyword_settings, owed, rare_word, start_reader

NS = "project:crash"
POINTS = ("forget.deleted", "forget.merged", "forget.checkpointed")

_FORGETTER = """
import sys
from aide_memoire import Memory, Settings
home, memory_id = sys.argv[1], sys.argv[2]
with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
    memory.forget(memory_id, namespace="project:crash")
print("not killed", flush=True)
"""



def _bytes(home: Path) -> bytes:
    """Every file of the store: the database, its WAL and its shared-memory index."""
    return b"".join((home / name).read_bytes() for name in
                    ("memory.db", "memory.db-wal", "memory.db-shm") if (home / name).exists())


def _seed(home: Path, word: str) -> str:
    with Memory(settings=keyword_settings(home)) as memory:
        for i in range(30):
            memory.store(f"Note {i}: the build cache lives on the second disk", namespace=NS)
        target = memory.store(f"The vault combination word is {word} for the blue cabinet",
                              namespace=NS, tags=["vault"])
        memory.store("An unrelated note about the team lunch", namespace=NS)
    return target


def _killed_forget(home: Path, target: str, point: str) -> None:
    env = {**os.environ, CRASH_ENV: point, "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"}
    proc = subprocess.run([sys.executable, "-c", _FORGETTER, str(home), target], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, (point, proc.returncode, proc.stderr[-2000:])
    assert "not killed" not in proc.stdout


def _doctor(home: Path) -> tuple[int, dict[str, object]]:
    done = cli(home, "doctor", "--json", check=False)
    report = json.loads(done.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    return done.returncode, {"healthy": report["healthy"], "purge": checks["purge"]}


@pytest.mark.parametrize("point", POINTS)
def test_a_kill_after_the_delete_leaves_nothing_once_the_store_is_opened_again(
    tmp_path: Path, point: str,
) -> None:
    home = tmp_path / "home"
    word = rare_word("qz")
    target = _seed(home, word)
    _killed_forget(home, target, point)
    if point != "forget.checkpointed":
        # Killed before the WAL was emptied: the text is still on disk, so the test
        # below proves the reopening removed it, not that it was never there.
        assert word.encode() in _bytes(home)
    with Memory(settings=keyword_settings(home)) as memory:
        assert memory.recall(word, namespace=NS) == []
    assert word.encode() not in _bytes(home)
    assert owed(home) == 0
    code, report = _doctor(home)
    assert code == 0 and report["healthy"] is True, report


@pytest.mark.parametrize("point", POINTS[:2])
def test_doctor_reports_the_owed_purge_and_is_healthy_only_once_it_is_done(
    tmp_path: Path, point: str,
) -> None:
    home = tmp_path / "home"
    word = rare_word("qz")
    target = _seed(home, word)
    _killed_forget(home, target, point)
    # A reader in another process keeps the next open from emptying the WAL.
    reader = start_reader(home)
    try:
        code, report = _doctor(home)
        assert code == 1 and report["healthy"] is False, report
        purge = report["purge"]
        assert isinstance(purge, dict) and purge["ok"] is False
        assert "purge is owed" in str(purge["detail"])
        assert "None" not in str(purge["detail"])
    finally:
        reader.communicate("", timeout=30)
    code, report = _doctor(home)
    assert code == 0 and report["healthy"] is True, report
    assert word.encode() not in _bytes(home)
    assert owed(home) == 0


def test_a_kill_after_the_checkpoint_owes_only_the_bookkeeping(tmp_path: Path) -> None:
    """Killed once the WAL was emptied: the text is already gone, a reader cannot hold
    anything back, and the next open clears the debt although someone reads."""
    home = tmp_path / "home"
    word = rare_word("qz")
    target = _seed(home, word)
    _killed_forget(home, target, "forget.checkpointed")
    assert owed(home) == 1 and word.encode() not in _bytes(home)
    reader = start_reader(home)
    try:
        code, report = _doctor(home)
        assert code == 0 and report["healthy"] is True, report
    finally:
        reader.communicate("", timeout=30)
    assert owed(home) == 0


def test_doctor_repair_and_maintenance_finish_an_owed_purge(tmp_path: Path) -> None:
    home = tmp_path / "home"
    word = rare_word("qz")
    target = _seed(home, word)
    _killed_forget(home, target, "forget.deleted")
    with Memory(settings=keyword_settings(home)) as memory:
        assert owed(home) == 0  # finished at open
    # Owe one again from a live process whose reader blocks it, then finish it by maintenance.
    with Memory(settings=keyword_settings(home)) as memory:
        other = memory.store(f"Another {word} card sits in the drawer", namespace=NS)
        reader = start_reader(home)
        memory.internals.db.commit_hooks.clear()  # only the explicit steps below may finish it
        assert memory.forget(other, namespace=NS) is True
        assert owed(home) == 1
        reader.communicate("", timeout=30)
        memory.maintain(NS, apply=True)
        assert owed(home) == 0
        assert word.encode() not in _bytes(home)
    assert word.encode() not in _bytes(home)


def test_doctor_repair_finishes_a_purge_a_reader_held_up_after_a_crash(tmp_path: Path) -> None:
    home = tmp_path / "home"
    word = rare_word("qz")
    target = _seed(home, word)
    _killed_forget(home, target, "forget.deleted")
    reader = start_reader(home)
    with Memory(settings=keyword_settings(home)) as memory:
        memory.internals.db.commit_hooks.clear()  # only doctor --repair may finish it here
        before = memory.doctor()
        assert [c.name for c in before.checks if not c.ok] == ["purge"]
        assert word.encode() in _bytes(home)
        reader.communicate("", timeout=30)
        after = memory.doctor(repair=True)
        assert after.healthy and next(c for c in after.checks if c.name == "purge").repaired
        assert owed(home) == 0
    assert word.encode() not in _bytes(home)
