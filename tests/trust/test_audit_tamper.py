"""The audit chain against an attacker who edits the SQLite file with a second connection.

Each attack is made with real SQL through an ordinary driver connection while no
``Memory`` is open, then a fresh ``Memory`` (and the CLI) runs ``audit verify``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from aide_memoire import Memory
from aide_memoire.engine.storage.store import content_hash

from .conftest import cli, keyword_settings

NS = "project:tamper"


def _filled(home: Path) -> list[str]:
    with Memory(settings=keyword_settings(home)) as memory:
        ids = [memory.store(f"note number {i} about the deploy pipeline", namespace=NS)
               for i in range(6)]
        memory.update(ids[2], namespace=NS, content="note number 2, rewritten by an update")
        assert memory.audit_verify().intact
    return ids


def _edit(home: Path, statements: list[tuple[str, tuple[object, ...]]]) -> None:
    conn = sqlite3.connect(home / "memory.db")
    with conn:
        for sql, params in statements:
            conn.execute(sql, params)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _delete_everything(home: Path, ids: list[str]) -> list[tuple[str, tuple[object, ...]]]:
    return [("DELETE FROM audit_events", ()), ("DELETE FROM audit_head", ())]


def _cut_tail(home: Path, ids: list[str]) -> list[tuple[str, tuple[object, ...]]]:
    # Remove the last two events and move the head back to the new last one, consistently.
    conn = sqlite3.connect(home / "memory.db")
    top = conn.execute("SELECT max(seq) FROM audit_events").fetchone()[0]
    seq, digest = conn.execute(
        "SELECT seq, hash FROM audit_events WHERE seq = ?", (top - 2,)).fetchone()
    conn.close()
    return [("DELETE FROM audit_events WHERE seq > ?", (seq,)),
            ("UPDATE audit_head SET seq = ?, hash = ?", (seq, digest))]


def _edit_content(home: Path, ids: list[str]) -> list[tuple[str, tuple[object, ...]]]:
    return [("UPDATE memories SET content = ? WHERE id = ?", ("planted instruction", ids[1]))]


def _edit_content_and_hash(home: Path, ids: list[str]) -> list[tuple[str, tuple[object, ...]]]:
    text = "planted instruction with its own hash"
    return [("UPDATE memories SET content = ?, content_hash = ? WHERE id = ?",
             (text, content_hash(text), ids[4]))]


Attack = Callable[[Path, list[str]], list[tuple[str, tuple[object, ...]]]]


@pytest.mark.parametrize(
    ("attack", "words"),
    [
        (_delete_everything, "anchor records event"),
        (_cut_tail, "events were removed from the end"),
        (_edit_content, "text was edited in the file"),
        (_edit_content_and_hash, "differs from its last audited change"),
    ],
    ids=["delete-all-events-and-head", "cut-tail-move-head", "edit-content",
         "edit-content-and-hash"],
)
def test_attack_is_detected(tmp_path: Path, attack: Attack, words: str) -> None:
    home = tmp_path / "home"
    ids = _filled(home)
    _edit(home, attack(home, ids))
    with Memory(settings=keyword_settings(home)) as memory:
        report = memory.audit_verify()
    assert not report.intact
    assert report.problem is not None and words in report.problem
    out = cli(home, "audit", "verify", "--json", check=False)
    assert out.returncode != 0
    assert json.loads(out.stdout)["intact"] is False


def test_removing_the_anchor_file_is_detected(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = _filled(home)
    _edit(home, _delete_everything(home, ids))
    (home / "memory.db.anchor").unlink()
    with Memory(settings=keyword_settings(home)) as memory:
        report = memory.audit_verify()
    assert not report.intact and "anchor file is missing" in (report.problem or "")


def test_forged_anchor_is_detected(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = _filled(home)
    _edit(home, _delete_everything(home, ids))
    anchor = home / "memory.db.anchor"
    body = json.loads(anchor.read_text())
    anchor.write_text(json.dumps({**body, "seq": 0}))
    with Memory(settings=keyword_settings(home)) as memory:
        report = memory.audit_verify()
    assert not report.intact and "MAC" in (report.problem or "")


def test_anchor_and_key_are_private_and_follow_writes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(settings=keyword_settings(home)) as memory:
        memory.store("first", namespace=NS)
        seq = memory.audit_verify().head_seq
        assert json.loads((home / "memory.db.anchor").read_text())["seq"] == seq
        memory.store("second", namespace=NS)
        later = memory.audit_verify().head_seq
        assert later is not None and later > (seq or 0)
        assert json.loads((home / "memory.db.anchor").read_text())["seq"] == later
    for name in ("memory.db.anchor", "audit.key"):
        assert (home / name).stat().st_mode & 0o777 == 0o600


def test_untouched_store_stays_intact_across_reopen_and_two_writers(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _filled(home)
    with Memory(settings=keyword_settings(home)) as a, Memory(settings=keyword_settings(home)) as b:
        a.store("from a", namespace=NS)
        b.store("from b", namespace=NS)
        a.store("from a again", namespace=NS)
        assert b.audit_verify().intact
    with Memory(settings=keyword_settings(home)) as memory:
        report = memory.audit_verify()
        assert report.intact, report.problem
        assert report.events >= 10


def test_restore_reanchors_at_the_snapshot(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(settings=keyword_settings(home)) as memory:
        memory.store("before the snapshot", namespace=NS)
        snap = memory.snapshot()
        memory.store("after the snapshot", namespace=NS)
    Memory.restore(snap.name, settings=keyword_settings(home))
    with Memory(settings=keyword_settings(home)) as memory:
        report = memory.audit_verify()
    assert report.intact, report.problem
