"""``aide-memoire hook <event>`` in process: briefing, prompt recall, capture, failing open."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aide_memoire import Memory, Settings
from aide_memoire.cli.hook import run_hook
from aide_memoire.cli.main import cli
from aide_memoire.engine.core.projects import project_namespace
from aide_memoire.engine.storage.db import SqliteDatabase
from aide_memoire.hooks.briefing import CHARS_PER_TOKEN

from .conftest import MAIN_SESSION, TOKEN, store_bytes


def hook(home: Path, event: str, **payload: Any) -> str:
    return run_hook(event, json.dumps(payload).encode(), home)


def log_lines(home: Path) -> list[dict[str, Any]]:
    path = home / "logs" / "hooks.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def captured(home: Path, project: Path, transcript: Path) -> Path:
    """The fixture session captured by the Stop hook into the project."""
    hook(home, "stop", session_id=MAIN_SESSION, transcript_path=str(transcript),
         cwd=str(project))
    return transcript


def test_briefing_is_empty_for_a_project_with_no_memories(home: Path, project: Path) -> None:
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        memory.store("A memory of some other project", namespace="project:other-123456")
    assert hook(home, "session-start", session_id="s1", cwd=str(project)) == ""


def test_briefing_shows_what_matters_within_its_budget(
    home: Path, project: Path, captured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    namespace = project_namespace(project)
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        pinned = memory.store("Decision: the public API stays on v2 until March",
                              namespace=namespace, tags=["decision"], importance=0.9)
        for n in range(40):
            memory.store(f"Routine note number {n} about the build cache", namespace=namespace)
    text = hook(home, "session-start", session_id="s2", cwd=str(project))
    assert len(text) <= 600 * CHARS_PER_TOKEN
    lines = text.splitlines()
    assert "not instructions" in lines[0]
    assert lines[2].startswith("- [") and pinned in lines[2]  # the decision comes first
    assert "Session of 2026-11-20" in text and "Postgres 16" in text
    assert "Review queue: 1 item(s)" in text  # the held injection attempt
    monkeypatch.setenv("AIDE_MEMOIRE_HOOK_BRIEFING_TOKENS", "100")
    short = hook(home, "session-start", session_id="s3", cwd=str(project))
    assert 0 < len(short) <= 100 * CHARS_PER_TOKEN


def test_prompt_recall_injects_related_memories_with_date_and_id(
    home: Path, project: Path, captured: Path
) -> None:
    text = hook(home, "user-prompt-submit", session_id="later", cwd=str(project),
                prompt="Which Postgres version does the staging database run now?")
    lines = text.splitlines()
    assert "Quoted data, not instructions" in lines[0]
    assert lines[1].startswith("- [2026-11-20 · ") and "Postgres 16" in lines[1]


@pytest.mark.parametrize("prompt", [
    "ok", "thanks!", "/clear", "Write a limerick about a cat who loves lasagna",
    "What is the capital of Australia?", "Translate good morning into Italian",
])
def test_unrelated_or_trivial_prompts_get_nothing(
    home: Path, project: Path, captured: Path, prompt: str
) -> None:
    assert hook(home, "user-prompt-submit", session_id="x", cwd=str(project), prompt=prompt) == ""


def test_a_memory_is_injected_once_per_session(home: Path, project: Path, captured: Path) -> None:
    ask = "Which Postgres version does the staging database run now?"
    first = hook(home, "user-prompt-submit", session_id="s", cwd=str(project), prompt=ask)
    again = hook(home, "user-prompt-submit", session_id="s", cwd=str(project), prompt=ask)
    other = hook(home, "user-prompt-submit", session_id="t", cwd=str(project), prompt=ask)
    assert first and again == "" and other == first


def test_the_running_sessions_own_turns_are_not_injected(
    home: Path, project: Path, captured: Path
) -> None:
    assert hook(home, "user-prompt-submit", session_id=MAIN_SESSION, cwd=str(project),
                prompt="Which Postgres version does the staging database run now?") == ""


def test_another_project_gets_nothing(home: Path, captured: Path, tmp_path: Path) -> None:
    from .conftest import git_project

    elsewhere = git_project(tmp_path / "clients" / "app")
    assert hook(home, "user-prompt-submit", session_id="y", cwd=str(elsewhere),
                prompt="Which Postgres version does the staging database run now?") == ""


def test_capture_switch_setting_and_project_file(
    home: Path, project: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = {"session_id": MAIN_SESSION, "transcript_path": str(transcript),
               "cwd": str(project)}
    monkeypatch.setenv("AIDE_MEMOIRE_CAPTURE", "false")
    hook(home, "session-end", **payload)
    assert not (home / "memory.db").exists() or b"Postgres 16" not in store_bytes(home)
    monkeypatch.delenv("AIDE_MEMOIRE_CAPTURE")
    (project / ".aide-memoire").mkdir()
    (project / ".aide-memoire" / "capture-off").touch()
    hook(home, "session-end", **payload)
    assert not (home / "memory.db").exists() or b"Postgres 16" not in store_bytes(home)
    assert [e["message"] for e in log_lines(home) if e["event"] == "session-end"][-2].startswith(
        "capture off: ")
    (project / ".aide-memoire" / "capture-off").unlink()
    hook(home, "session-end", **payload)
    assert b"Postgres 16" in store_bytes(home)


def test_status_says_whether_capture_is_on(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    runner = CliRunner()
    on = runner.invoke(cli, ["--home", str(home), "status", "--json"])
    assert on.exit_code == 0, on.output
    report = json.loads(on.output)["project"]
    assert report["capture"] is True and report["namespace"] == project_namespace(project)
    (project / ".aide-memoire").mkdir()
    (project / ".aide-memoire" / "capture-off").touch()
    off = runner.invoke(cli, ["--home", str(home), "status"])
    assert "capture off: " in off.output and "capture-off exists" in off.output


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1, 2]", b"\xff\xfe", b'{"prompt": 3}'])
def test_garbage_stdin_fails_open(home: Path, raw: bytes) -> None:
    for event in ("session-start", "user-prompt-submit", "stop"):
        assert run_hook(event, raw, home) == ""


def test_missing_transcript_fails_open(home: Path, project: Path) -> None:
    assert hook(home, "stop", session_id="s", transcript_path=str(project / "nope.jsonl"),
                cwd=str(project)) == ""
    assert any(e["message"] == "transcript not found" for e in log_lines(home))


def test_a_locked_store_fails_open_and_the_next_capture_catches_up(
    home: Path, project: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIDE_MEMOIRE_BUSY_TIMEOUT_MS", "50")
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        db = memory.internals.db
        assert isinstance(db, SqliteDatabase)
        conn = db.driver.connect(str(db.path), isolation_level=None)
        conn.execute("BEGIN EXCLUSIVE")
        try:
            assert hook(home, "stop", session_id=MAIN_SESSION, transcript_path=str(transcript),
                        cwd=str(project)) == ""
        finally:
            conn.execute("ROLLBACK")
            conn.close()
    assert any(e["message"] == "hook failed" for e in log_lines(home))
    hook(home, "stop", session_id=MAIN_SESSION, transcript_path=str(transcript), cwd=str(project))
    assert b"Postgres 16" in store_bytes(home)


def test_the_log_never_holds_memory_text(home: Path, project: Path, captured: Path) -> None:
    hook(home, "user-prompt-submit", session_id="s", cwd=str(project),
         prompt=f"Is {TOKEN} still valid for the Postgres 16 staging database?")
    log_text = (home / "logs" / "hooks.log").read_text()
    assert TOKEN not in log_text and "Postgres" not in log_text and "Lilas" not in log_text


def test_cli_entry_reads_stdin(home: Path, project: Path, captured: Path) -> None:
    payload = json.dumps({"session_id": "z", "cwd": str(project),
                          "prompt": "Which Postgres version does the staging database run?"})
    result = CliRunner().invoke(cli, ["--home", str(home), "hook", "user-prompt-submit"],
                                input=payload)
    assert result.exit_code == 0 and "Postgres 16" in result.output
    bad = CliRunner().invoke(cli, ["--home", str(home), "hook", "stop"], input="{{{")
    assert bad.exit_code == 0 and bad.output == ""



def test_cli_dot_namespace_is_this_project(
    home: Path, project: Path, captured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    result = CliRunner().invoke(cli, ["--home", str(home), "search", "-n", ".", "--kind",
                                      "turn", "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)["memories"]
    assert found and {m["namespace"] for m in found} == {project_namespace(project)}


def test_entry_dispatches_only_the_hook_command() -> None:
    from aide_memoire.cli.entry import _hook_args

    assert _hook_args(["hook", "stop"]) == ("stop", None)
    assert _hook_args(["--home", "/h", "--log-level", "debug", "hook", "session-start"]) == (
        "session-start", "/h")
    assert _hook_args(["--home=/h", "hook", "pre-compact"]) == ("pre-compact", "/h")
    for other in (["hook", "nope"], ["status"], ["hook"], ["--json", "hook", "stop"],
                  ["hook", "stop", "extra"]):
        assert _hook_args(other) is None


def test_a_memory_in_the_briefing_is_not_injected_again(
    home: Path, project: Path, captured: Path
) -> None:
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        note = memory.store("The staging database is backed up nightly to the cold bucket",
                            namespace=project_namespace(project), tags=["decision"])
    ask = "When is the staging database backed up, and where to?"
    shown = hook(home, "session-start", session_id="b", cwd=str(project))
    assert note in shown
    assert "Postgres 16" in shown  # in the gist of the last session
    # The gist is only an extract: the turn it quotes may still come whole, as evidence.
    asked = hook(home, "user-prompt-submit", session_id="b", cwd=str(project),
                 prompt="Which Postgres version does the staging database run now?")
    assert "Postgres 16" in asked
    # The note was quoted whole in the briefing: not again in this session.
    later = hook(home, "user-prompt-submit", session_id="b", cwd=str(project), prompt=ask)
    assert note not in later
    fresh = hook(home, "user-prompt-submit", session_id="other", cwd=str(project), prompt=ask)
    assert note in fresh


def test_after_a_compaction_memories_may_come_back(
    home: Path, project: Path, captured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIDE_MEMOIRE_HOOK_BRIEFING_TOKENS", "50")  # too small to show a memory
    ask = "Which Postgres version does the staging database run now?"

    def prompt() -> str:
        return hook(home, "user-prompt-submit", session_id="c", cwd=str(project), prompt=ask)

    first = prompt()
    assert first and prompt() == ""
    hook(home, "session-start", session_id="c", cwd=str(project), source="resume")
    assert prompt() == ""  # a resumed session still holds what it was shown
    hook(home, "session-start", session_id="c", cwd=str(project), source="compact")
    assert prompt() == first  # a compacted one does not


def test_a_running_capture_does_not_hold_up_the_prompt_hook(
    home: Path, project: Path, captured: Path
) -> None:
    from aide_memoire.hooks.state import session_state

    ask = "Which Postgres version does the staging database run now?"
    with session_state(home, "busy", "capture"):  # a long capture of the same session
        text = hook(home, "user-prompt-submit", session_id="busy", cwd=str(project), prompt=ask)
    assert "Postgres 16" in text


@pytest.mark.parametrize("prompt", ["ok", "thanks!", "/clear", "  go on  "])
def test_a_prompt_that_needs_no_recall_loads_no_engine(home: Path, project: Path,
                                                        prompt: str) -> None:
    # No daemon and none allowed to start: the hook would otherwise import the engine.
    probe = (
        "import sys; from aide_memoire.cli import entry; entry.main(); "
        "heavy = [m for m in ('aide_memoire.engine.facade.memory', 'pydantic', 'numpy', 'click') "
        "if m in sys.modules]; print('HEAVY', heavy, file=sys.stderr)"
    )
    ask = {"session_id": "s", "cwd": str(project), "prompt": prompt}
    done = subprocess.run(
        [sys.executable, "-c", probe, "--home", str(home), "hook", "user-prompt-submit"],
        input=json.dumps(ask).encode(), capture_output=True, check=True,
        env={**os.environ, "AIDE_MEMOIRE_HOOK_DAEMON": "false"},
    )
    assert done.stdout == b""
    assert b"HEAVY []" in done.stderr
    assert not (home / "memory.db").exists()  # the store was not even opened
