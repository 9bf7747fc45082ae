"""A start gate for the many-process tests: the processes start together, on the server.

Importing the engine takes a process a second or more on a loaded machine, longer than
its writes take: started one after another, the first could finish before the last
begins, and the test would prove nothing about concurrency. The test holds an advisory
lock; each process, once its store is open, waits for that lock (shared) and then
starts; the test lets go when every process is waiting.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg

from aide_memoire.engine.storage.protocol import Connection

GATE_KEY = 19_019  # an advisory lock key of the test database


def wait_at_gate(conn: Connection) -> None:
    """In a worker: block until the test opens the gate."""
    conn.execute("SELECT pg_advisory_lock_shared(?)", (GATE_KEY,)).fetchone()
    conn.execute("SELECT pg_advisory_unlock_shared(?)", (GATE_KEY,)).fetchone()


@contextlib.contextmanager
def start_gate(url: str) -> Iterator[Callable[[Sequence[subprocess.Popen[str]]], None]]:
    """Hold the gate; the yielded ``release(workers)`` opens it once every worker waits."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (GATE_KEY,))

        def release(workers: Sequence[subprocess.Popen[str]], timeout_s: float = 300) -> None:
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                waiting = conn.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                    "AND objid = %s AND NOT granted AND database = "
                    "(SELECT oid FROM pg_database WHERE datname = current_database())",
                    (GATE_KEY,),
                ).fetchone()
                if waiting and waiting[0] >= len(workers):
                    break
                if any(w.poll() is not None for w in workers):
                    break  # one ended before the gate: its own report says why
                time.sleep(0.05)
            conn.execute("SELECT pg_advisory_unlock(%s)", (GATE_KEY,))

        yield release


def race(url: str, commands: Sequence[Sequence[str]], timeout_s: float,
         quiet: Callable[[str], bool] = lambda err: "Traceback" not in err,
         ) -> list[dict[str, Any]]:
    """Run one Python process per argument list behind the gate, all released at once;
    each must exit 0 with a clean stderr (``quiet``) and end its stdout with a JSON
    report, returned in order."""
    with start_gate(url) as release:
        workers = [
            subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=dict(os.environ))
            for args in commands
        ]
        release(workers)  # all at once, once every one has its store open
    reports = []
    for worker in workers:
        out, err = worker.communicate(timeout=timeout_s)
        assert worker.returncode == 0, err
        assert quiet(err), err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports
