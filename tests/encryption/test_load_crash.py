"""The SIGKILL-under-load test of tests/ops/test_crash.py, on an encrypted store: writers
killed at random points lose no acknowledged write and leave a sound store (SQLCipher's
WAL is SQLite's, page by page encrypted)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

from aide_memoire.engine.ops import encrypt as ops
from aide_memoire.engine.storage.driver import is_encrypted

from ..ops.test_crash import KILLS, WRITER
from .conftest import Keyed


def test_sigkill_under_load_on_an_encrypted_store_loses_no_acknowledged_write(
        keyed: Keyed) -> None:
    keyed.memory().close()
    ops.encrypt(keyed.settings(), actor="test")
    env = {**os.environ, **keyed.env}
    rng = random.Random(2929)
    acknowledged: list[str] = []
    for round_ in range(KILLS):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(keyed.home), str(round_)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "open"
        time.sleep(rng.uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        acknowledged += [line for line in out.splitlines() if len(line) == 32]
        with keyed.memory() as memory:
            assert memory.status().sqlite_driver == "sqlcipher3"
            conn = memory.internals.db.conn()
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            report = memory.doctor()
            assert report.healthy, [c for c in report.checks if not c.ok]
            present = {r.id for r in memory.internals.store.iter_namespace(conn, "crash")}
            lost = [i for i in acknowledged if i not in present]
            assert not lost, f"round {round_}: {len(lost)} acknowledged writes lost"
    assert is_encrypted(keyed.home / "memory.db")
    assert len(set(acknowledged)) > KILLS
