"""The audit chain detects an edited, deleted or reordered event, and events cut off the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aide_memoire import Memory

from .conftest import cli, keyword_settings


def _seed(home: Path) -> list[str]:
    with Memory(settings=keyword_settings(home)) as memory:
        ids = [memory.store(f"note number {i} about gardening", namespace="a") for i in range(5)]
        memory.update(ids[0], namespace="a", content="note zero, revised")
        memory.forget(ids[1], namespace="a")
        assert memory.audit_verify().intact
    return ids


def _tamper(home: Path, sql: str) -> None:
    with Memory(settings=keyword_settings(home)) as memory, memory.internals.db.write() as tx:
        for statement in sql.split(";"):
            tx.execute(statement)


def _verify(home: Path) -> tuple[int, dict[str, object]]:
    proc = cli(home, "audit", "verify", "--json", check=False)
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.parametrize(
    ("sql", "bad"),
    [
        ("UPDATE audit_events SET actor = 'mallory' WHERE seq = 3", 3),
        ("UPDATE audit_events SET detail = '{\"kind\":\"fact\"}' WHERE seq = 2", 2),
        ("DELETE FROM audit_events WHERE seq = 4", 5),
        ("UPDATE audit_events SET seq = -1 WHERE seq = 2;"
         "UPDATE audit_events SET seq = 2 WHERE seq = 3;"
         "UPDATE audit_events SET seq = 3 WHERE seq = -1", 2),
        ("DELETE FROM audit_events WHERE seq = (SELECT max(seq) FROM audit_events)", 12),
    ],
    ids=["edited-actor", "edited-detail", "deleted", "reordered", "tail-cut"],
)
def test_tampering_is_detected_and_named(tmp_path: Path, sql: str, bad: int) -> None:
    home = tmp_path / "home"
    _seed(home)
    code, before = _verify(home)
    # 7 changes (5 stores, an update, a forget) and the 5 stores' memory.fields seals.
    assert code == 0 and before["intact"] is True and before["events"] == 12
    _tamper(home, sql)
    code, after = _verify(home)
    assert code == 1
    assert after["intact"] is False
    assert after["first_bad_seq"] == bad


def test_events_carry_hashes_never_content(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = _seed(home)
    with Memory(settings=keyword_settings(home)) as memory:
        rows = memory.internals.db.conn().execute("SELECT * FROM audit_events").fetchall()
        assert "gardening" not in repr(rows)
        history = memory.audit_history(ids[0])
        assert [e.action for e in history] == ["store", "update"]
        assert history[0].content_hash != history[1].content_hash
        assert all(e.actor == "python" for e in history)


def test_cli_actor_and_show(tmp_path: Path) -> None:
    home = tmp_path / "home"
    memory_id = cli(home, "store", "a note from the shell", "-n", "x").stdout.strip()
    events = json.loads(cli(home, "audit", "show", memory_id, "--json").stdout)["events"]
    assert [(e["action"], e["actor"]) for e in events] == [("store", "cli")]
