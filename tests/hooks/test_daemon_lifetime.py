"""The warm daemon's lifetime, with real processes: fifty prompt hooks at once with no
daemon start at most one; a second daemon for the same home refuses to run; an idle
daemon exits by itself; a hook never starts one where the user turned that off.

Every process started here is found by its command line naming this test's home and
stopped by its pid when the test ends, so none outlives pytest.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real daemons and fifty hook processes

HOOKS = 50
IDLE_S = 4


def daemons(home: Path) -> set[int]:
    """Pids of `serve --http` processes whose command line names ``home``."""
    found: set[int] = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            words = cmdline.read_bytes().split(b"\0")
            if str(home).encode() in words and b"--http" in words:
                found.add(int(cmdline.parent.name))
    return found


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie (exited, not yet reaped by its parent) is gone too.
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z"):
            return True
    return False


def wait_until(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.fixture
def reaped(home: Path) -> Iterator[None]:
    """Stop, by pid, every daemon of this home still running when the test ends."""
    yield
    for pid in daemons(home):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    with contextlib.suppress(AssertionError):
        wait_until(lambda: all(_gone(p) for p in daemons(home)), 30, "the daemons to stop")
    for pid in daemons(home):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIDE_MEMOIRE_")}
    return {**env, "AIDE_MEMOIRE_EMBEDDING_MODEL": "none", **extra}


def _hook(home: Path, project: Path, env: dict[str, str], n: int) -> int:
    ask = {"session_id": f"s{n}", "cwd": str(project),
           "prompt": "Which Postgres version does the staging database run?"}
    done = subprocess.run(
        [sys.executable, "-m", "aide_memoire.cli.entry", "--home", str(home), "hook",
         "user-prompt-submit"], input=json.dumps(ask).encode(), env=env,
        capture_output=True, timeout=120, check=False)
    return done.returncode


def _serve(home: Path, env: dict[str, str], err: Path) -> subprocess.Popen[bytes]:
    """``serve --http`` on any free port, its stderr in ``err``."""
    with err.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "aide_memoire.cli.main", "--home", str(home), "serve",
             "--http", "--port", "0"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink)


def test_fifty_hooks_with_no_daemon_leave_at_most_one(home: Path, project: Path,
                                                      reaped: None) -> None:
    env = _env(AIDE_MEMOIRE_HOOK_DAEMON="true", AIDE_MEMOIRE_DAEMON_IDLE_S="120")
    with ThreadPoolExecutor(max_workers=10) as pool:
        codes = list(pool.map(lambda n: _hook(home, project, env, n), range(HOOKS)))
    assert codes == [0] * HOOKS  # every hook fails open, none blocked the prompt
    # Let any daemon that was started get as far as its lock, then count.
    wait_until(lambda: (home / "mcp-http.json").exists(), 90, "the daemon to announce itself")
    time.sleep(2)
    running = [p for p in daemons(home) if not _gone(p)]
    assert len(running) == 1, running
    info = json.loads((home / "mcp-http.json").read_text())
    assert info["pid"] == running[0]


def test_a_second_daemon_for_the_same_home_refuses_to_run(home: Path, tmp_path: Path,
                                                          reaped: None) -> None:
    env = _env(AIDE_MEMOIRE_DAEMON_IDLE_S="120")
    first = _serve(home, env, tmp_path / "first.err")
    wait_until(lambda: (home / "mcp-http.json").exists(), 90, "the first daemon")
    # Any free port, so only the home's lock can refuse it.
    second = _serve(home, env, tmp_path / "second.err")
    assert second.wait(timeout=60) != 0
    err = (tmp_path / "second.err").read_bytes()
    assert b"already serves this store" in err and str(first.pid).encode() in err
    assert first.poll() is None  # the first one is unharmed
    first.terminate()
    first.wait(30)


def test_an_idle_daemon_exits_by_itself(home: Path, tmp_path: Path, reaped: None) -> None:
    started = _serve(home, _env(AIDE_MEMOIRE_DAEMON_IDLE_S=str(IDLE_S)), tmp_path / "d.err")
    wait_until(lambda: (home / "mcp-http.json").exists(), 90, "the daemon to start")
    code = started.wait(timeout=IDLE_S + 60)  # it stops without being asked
    err = (tmp_path / "d.err").read_bytes()
    assert code == 0, err
    assert b"no request for" in err
    assert not (home / "mcp-http.json").exists()  # it took its discovery file with it
    # The lock went with the process: a new daemon can start at once.
    again = _serve(home, _env(AIDE_MEMOIRE_DAEMON_IDLE_S=str(IDLE_S)), tmp_path / "e.err")
    wait_until(lambda: (home / "mcp-http.json").exists(), 90, "a new daemon")
    again.terminate()
    again.wait(30)


def test_a_hook_never_starts_the_daemon_where_it_is_turned_off(home: Path, project: Path,
                                                               reaped: None) -> None:
    env = _env(AIDE_MEMOIRE_HOOK_DAEMON="false")
    for n in range(3):
        assert _hook(home, project, env, n) == 0
    time.sleep(2)
    assert daemons(home) == set()
    assert not (home / "mcp-http.json").exists()
