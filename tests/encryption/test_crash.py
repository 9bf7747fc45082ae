"""encrypt and rekey killed with SIGKILL (at each named crash point, and at random
moments of a larger store's conversion): the store always opens, with the old key or the
new one, never neither, holding every memory; running the command again finishes it."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlcipher3

from aide_memoire.engine.core.crashpoints import CRASH_ENV
from aide_memoire.engine.storage.driver import is_encrypted

from .conftest import Keyed

MEMORIES = 3


def _cli(keyed: Keyed, *args: str, crash_at: str | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, **keyed.env}
    if crash_at:
        env[CRASH_ENV] = crash_at
    return subprocess.Popen([sys.executable, "-m", "aide_memoire.cli.entry", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ok(keyed: Keyed, *args: str) -> None:
    proc = _cli(keyed, *args)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err


def _opens_with(path: Path, key: str | None) -> bool:
    """Whether the file reads as our store with this key (None: as plain SQLite)."""
    conn = sqlcipher3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        conn.execute("PRAGMA cipher_log_level = NONE")
        if key is not None:
            conn.execute(f"PRAGMA key = \"x'{key}'\"")
        return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0]) >= 0
    except sqlcipher3.DatabaseError:
        return False
    finally:
        conn.close()


def _keys_on_disk(keyed: Keyed) -> list[str]:
    files = (keyed.key_file, keyed.key_file.with_name(keyed.key_file.name + ".next"))
    return [f.read_text().strip() for f in files if f.exists()]


def _assert_store_sound(keyed: Keyed, count: int) -> None:
    with keyed.memory() as memory:
        conn = memory.internals.db.conn()
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == count
        assert memory.audit_verify().intact


def _plain_store(keyed: Keyed, count: int = MEMORIES) -> None:
    with keyed.memory() as memory:
        memory.store_many([{"content": f"note {i} about the harbour crane"}
                           for i in range(count)], namespace="p")
        memory.snapshot()


@pytest.mark.parametrize("point", ["encrypt.key_kept", "encrypt.exported",
                                   "encrypt.swapped", "encrypt.snapshots"])
def test_encrypt_killed_at_each_point_leaves_a_store_that_opens(keyed: Keyed,
                                                                point: str) -> None:
    _plain_store(keyed)
    proc = _cli(keyed, "encrypt", crash_at=point)
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, point
    live = keyed.home / "memory.db"
    keys = _keys_on_disk(keyed)
    # The old way (plain) or the new key: never neither.
    assert _opens_with(live, None) or any(_opens_with(live, k) for k in keys)
    _assert_store_sound(keyed, MEMORIES)
    assert not list(keyed.home.glob(".memory.db.*-partial")) or point == "encrypt.exported"
    finished = _cli(keyed, "encrypt")
    _, err = finished.communicate(timeout=120)
    assert finished.returncode == 0, err
    assert is_encrypted(live)
    assert all(is_encrypted(p) for p in (keyed.home / "snapshots").glob("memory-*.db"))
    _assert_store_sound(keyed, MEMORIES)


@pytest.mark.parametrize("point", ["rekey.pending_kept", "rekey.exported", "rekey.swapped",
                                   "rekey.snapshots", "rekey.promoted"])
def test_rekey_killed_at_each_point_opens_with_the_old_or_the_new_key(
        keyed: Keyed, point: str) -> None:
    _plain_store(keyed)
    _ok(keyed, "encrypt")
    with keyed.memory() as memory:
        memory.snapshot()  # one snapshot encrypted from the start, one converted
    old = keyed.key()
    proc = _cli(keyed, "rekey", crash_at=point)
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, point
    live = keyed.home / "memory.db"
    new = sorted({k for k in _keys_on_disk(keyed) if k != old})
    assert len(new) == 1, point  # the new key was kept before anything needed it
    assert _opens_with(live, old) or _opens_with(live, new[0])
    for snap in (keyed.home / "snapshots").glob("memory-*.db"):
        assert _opens_with(snap, old) or _opens_with(snap, new[0])
    _assert_store_sound(keyed, MEMORIES)
    finished = _cli(keyed, "rekey")
    _, err = finished.communicate(timeout=120)
    assert finished.returncode == 0, err
    final = keyed.key()
    assert final != old and _opens_with(live, final) and not _opens_with(live, old)
    assert not keyed.key_file.with_name(keyed.key_file.name + ".next").exists()
    for snap in (keyed.home / "snapshots").glob("memory-*.db"):
        assert _opens_with(snap, final)
    _assert_store_sound(keyed, MEMORIES)


@pytest.mark.parametrize("command", ["encrypt", "rekey"])
def test_killed_at_random_moments_of_a_larger_conversion(keyed: Keyed, command: str) -> None:
    count = 3000
    _plain_store(keyed, count)
    if command == "rekey":
        _ok(keyed, "encrypt")
    rng = random.Random(29)
    live = keyed.home / "memory.db"
    for _ in range(6):
        before = _keys_on_disk(keyed)
        proc = _cli(keyed, command)
        time.sleep(rng.uniform(0.3, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=120)
        keys = _keys_on_disk(keyed)
        assert (_opens_with(live, None) and command == "encrypt") or any(
            _opens_with(live, k) for k in {*before, *keys})
        _assert_store_sound(keyed, count)
