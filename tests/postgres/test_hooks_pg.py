"""The Claude Code hooks and the loopback daemon against a PostgreSQL store, unchanged.

Issue 19: "the daemon and hooks work against it unchanged". Each test runs the real hook
entry point (``aide-memoire hook <event>`` as a process, Claude Code's hook JSON on
stdin) with nothing but ``AIDE_MEMOIRE_DATABASE_URL`` (and facts off, which PostgreSQL
needs for now) in its environment: the Stop hook captures the fixture session, the
prompt hook brings back what it stored, and the rows are on the server, not in a SQLite
file of the data home. Once in process (no daemon) and once through a real daemon
(``serve --http``) that the hooks ask.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from aide_memoire.engine.core.projects import project_namespace

from ..hooks import conftest as hook_fixtures
from ..hooks.conftest import MAIN_SESSION
from ..hooks.test_daemon import _wait_for, messages

pytestmark = pytest.mark.slow  # real server, real processes

# The hook tests' own fixtures: a git project, a copy of the fixture session.
project = hook_fixtures.project
transcript = hook_fixtures.transcript

ASK = "Which Postgres version does the staging database run now?"


@pytest.fixture
def pg_env(pg_url: str, home: Path) -> dict[str, str]:
    """The environment a hook process gets from Claude Code, with the store on the server."""
    env = {**os.environ, "AIDE_MEMOIRE_DATABASE_URL": pg_url,
           "AIDE_MEMOIRE_EXTRACT_FACTS": "false", "AIDE_MEMOIRE_EMBEDDING_MODEL": "none",
           "AIDE_MEMOIRE_HOOK_DAEMON": "false",
           # Behaviour, not speed: a loaded test machine must not turn recall into a
           # fail-open timeout (bench/hooks.py measures the hooks' time).
           "AIDE_MEMOIRE_HOOK_TIME_LIMIT_S": "60"}
    for name in ("CLAUDE_PROJECT_DIR", "AIDE_MEMOIRE_CAPTURE"):
        env.pop(name, None)
    return env


def hook(env: dict[str, str], home: Path, event: str, **payload: object) -> str:
    """One hook as Claude Code runs it: a process, the JSON on stdin, context on stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "aide_memoire.cli.entry", "--home", str(home), "hook", event],
        input=json.dumps(payload).encode(), env=env, capture_output=True, timeout=120,
        check=True,
    )
    return done.stdout.decode()


def server_turns(url: str, namespace: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT content FROM aide_memoire.memories WHERE namespace = %s AND kind = 'turn'",
            (namespace,),
        ).fetchall()
    return [str(r[0]) for r in rows]


def capture_and_ask(env: dict[str, str], home: Path, project: Path, transcript: Path) -> str:
    assert hook(env, home, "stop", session_id=MAIN_SESSION, cwd=str(project),
                transcript_path=str(transcript)) == ""
    return hook(env, home, "user-prompt-submit", session_id="s2", cwd=str(project),
                prompt=ASK)


def test_hooks_capture_and_recall_on_postgres_in_process(
    pg_env: dict[str, str], pg_url: str, home: Path, project: Path, transcript: Path
) -> None:
    text = capture_and_ask(pg_env, home, project, transcript)
    assert "Postgres 16" in text
    assert "not instructions" in text  # recalled text is framed as quoted memory
    turns = server_turns(pg_url, project_namespace(project))
    assert any("Postgres 16" in t for t in turns)
    assert not list(home.glob("memory.db*"))  # nothing went to a SQLite file
    assert "hook failed" not in messages(home)
    # The next session's briefing reads the same server store.
    briefing = hook(pg_env, home, "session-start", session_id="s3", cwd=str(project))
    assert "Postgres 16" in briefing
    # A second Stop over the same transcript adds nothing (the capture cursor holds).
    before = len(turns)
    hook(pg_env, home, "stop", session_id=MAIN_SESSION, cwd=str(project),
         transcript_path=str(transcript))
    assert len(server_turns(pg_url, project_namespace(project))) == before


@pytest.fixture
def pg_daemon(pg_env: dict[str, str], home: Path) -> Iterator[dict[str, object]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "aide_memoire.cli.main", "--home", str(home), "serve", "--http"],
        env=pg_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        yield _wait_for(home, proc)
    finally:
        proc.terminate()
        proc.wait(30)


def test_hooks_through_the_daemon_on_postgres(
    pg_env: dict[str, str], pg_url: str, home: Path, project: Path, transcript: Path,
    pg_daemon: dict[str, object],
) -> None:
    text = capture_and_ask(pg_env, home, project, transcript)
    assert "Postgres 16" in text
    log = messages(home)
    assert log.count("answered by the daemon") == 2, log
    assert "daemon did not answer" not in log
    assert any("Postgres 16" in t for t in server_turns(pg_url, project_namespace(project)))
    assert not list(home.glob("memory.db*"))
