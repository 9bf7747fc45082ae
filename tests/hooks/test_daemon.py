"""The hooks through a real loopback daemon: ``POST /hook``, its token, starting on demand."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aide_memoire.cli.hook import _post, run_hook
from aide_memoire.hooks.injections import read_injections

from .conftest import MAIN_SESSION

pytestmark = pytest.mark.slow  # each test starts a real daemon


def _wait_for(home: Path, proc: subprocess.Popen[bytes] | None = None) -> dict[str, Any]:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and (proc is None or proc.poll() is None):
        path = home / "mcp-http.json"
        if path.exists():
            info: dict[str, Any] = json.loads(path.read_text())
            try:
                with socket.create_connection(("127.0.0.1", int(info["port"])), timeout=1):
                    return info
            except OSError:
                pass
        time.sleep(0.1)
    raise AssertionError("daemon did not start")


def _stop(pid: int) -> None:
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


@pytest.fixture
def daemon(home: Path) -> Iterator[dict[str, Any]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "aide_memoire.cli.main", "--home", str(home), "serve", "--http"],
        env={**os.environ, "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        yield _wait_for(home, proc)
    finally:
        proc.terminate()
        proc.wait(30)


def messages(home: Path) -> list[str]:
    return [json.loads(x)["message"] for x in (home / "logs" / "hooks.log").read_text()
            .splitlines()]


def test_hooks_are_answered_by_the_daemon(
    home: Path, project: Path, transcript: Path, daemon: dict[str, Any]
) -> None:
    run_hook("stop", json.dumps({"session_id": MAIN_SESSION, "cwd": str(project),
                                 "transcript_path": str(transcript)}).encode(), home)
    ask = {"session_id": "s2", "cwd": str(project),
           "prompt": "Which Postgres version does the staging database run now?"}
    text = run_hook("user-prompt-submit", json.dumps(ask).encode(), home)
    assert "Postgres 16" in text
    assert run_hook("user-prompt-submit", json.dumps(ask).encode(), home) == ""  # once only
    assert messages(home).count("answered by the daemon") == 3
    assert "daemon did not answer" not in messages(home)
    # The injection log says the daemon served it (once: the second prompt got nothing).
    (entry,) = read_injections(home)
    assert entry["served_by"] == "daemon" and entry["session_id"] == "s2"


def test_the_hook_route_needs_the_token(home: Path, daemon: dict[str, Any]) -> None:
    body = json.dumps({"op": "briefing", "namespace": "project:x-123456"}).encode()
    status, _ = _post("127.0.0.1", int(daemon["port"]), "wrong-token", body, 10)
    assert status == 401
    token = (home / "mcp-token").read_text().strip()
    status, payload = _post("127.0.0.1", int(daemon["port"]), token, body, 10)
    assert status == 200 and json.loads(payload) == {"text": "", "ids": []}
    status, payload = _post("127.0.0.1", int(daemon["port"]), token, b"[1]", 10)
    assert status == 400 and "JSON object" in json.loads(payload)["error"]
    bad = json.dumps({"op": "drop-tables", "namespace": "project:x-123456"}).encode()
    status, payload = _post("127.0.0.1", int(daemon["port"]), token, bad, 10)
    assert status == 400 and "op must be one of" in json.loads(payload)["error"]


def test_session_start_starts_the_daemon_in_the_background(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIDE_MEMOIRE_HOOK_DAEMON", "true")
    started = time.monotonic()
    assert run_hook("session-start", json.dumps({"session_id": "s", "cwd": str(project)})
                    .encode(), home) == ""
    took = time.monotonic() - started
    info = _wait_for(home)
    try:
        assert time.monotonic() - started > took  # the hook did not wait for the daemon
        # A second hook meanwhile starts no second daemon.
        run_hook("session-start", json.dumps({"session_id": "t", "cwd": str(project)})
                 .encode(), home)
        assert json.loads((home / "mcp-http.json").read_text())["pid"] == info["pid"]
    finally:
        _stop(int(info["pid"]))


def test_a_prompt_hook_answered_by_the_daemon_loads_no_engine(
    home: Path, project: Path, transcript: Path, daemon: dict[str, Any]
) -> None:
    run_hook("stop", json.dumps({"session_id": MAIN_SESSION, "cwd": str(project),
                                 "transcript_path": str(transcript)}).encode(), home)
    probe = (
        "import sys; from aide_memoire.cli import entry; entry.main(); "
        "heavy = [m for m in ('aide_memoire.engine.facade.memory', 'pydantic', 'numpy', 'click') "
        "if m in sys.modules]; print('HEAVY', heavy, file=sys.stderr)"
    )
    ask = {"session_id": "fresh", "cwd": str(project),
           "prompt": "Which Postgres version does the staging database run now?"}
    done = subprocess.run(
        [sys.executable, "-c", probe, "--home", str(home), "hook", "user-prompt-submit"],
        input=json.dumps(ask).encode(), capture_output=True, check=True,
    )
    assert b"Postgres 16" in done.stdout
    assert b"HEAVY []" in done.stderr
