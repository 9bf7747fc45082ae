"""``aide-memoire import claude-code``: counts, the right namespaces, a second run adds 0."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aide_memoire import Memory, Settings
from aide_memoire.cli.main import cli
from aide_memoire.engine.core.projects import project_namespace

from .conftest import FIXTURES, PRIVATE, TOKEN, store_bytes

WORK = "/home/dev/work/app"  # the cwd the fixture sessions were recorded in
CLIENT = "/home/dev/clients/app"


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A $HOME whose ~/.claude/projects holds the fixture transcripts."""
    folder = tmp_path / "user"
    shutil.copytree(FIXTURES, folder / ".claude" / "projects")
    monkeypatch.setenv("HOME", str(folder))
    return folder


def run(home: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["--home", str(home), "import", "claude-code", *args,
                                      "--json"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_dry_run_counts_and_changes_nothing(home: Path, user_home: Path) -> None:
    report = run(home, "--all", "--dry-run")
    assert report["dry_run"] is True
    assert report["sessions"] == 3 and report["transcripts"] == 3
    # 11 turns in the main session (the held one included), 4 in the second, 2 in the client's.
    assert report["turns"] == 17
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        assert memory.status().memories == 0


def test_import_all_lands_in_each_projects_namespace_and_is_idempotent(
    home: Path, user_home: Path
) -> None:
    first = run(home, "--all")
    assert first["turns"] == 17 and first["sessions"] == 3
    assert first["namespaces"] == {project_namespace(WORK): 15, project_namespace(CLIENT): 2}
    assert first["redacted"] == 2 and first["private"] == 1 and first["malformed"] == 2
    second = run(home, "--all")
    assert second["turns"] == 0 and second["present"] == 17
    again = run(home, "--all", "--dry-run")
    assert again["turns"] == 0
    raw = store_bytes(home)
    assert TOKEN.encode() not in raw and PRIVATE.encode() not in raw
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        counts = memory.status().namespaces
        assert counts == {project_namespace(WORK): 15, project_namespace(CLIENT): 2}
        hits = memory.recall("flyctl deploy branch", namespace=project_namespace(CLIENT))
        assert hits and "flyctl deploy" in hits[0].content


def test_import_one_project(home: Path, user_home: Path) -> None:
    report = run(home, "--project", CLIENT)
    assert report["turns"] == 2 and list(report["namespaces"]) == [project_namespace(CLIENT)]


def test_import_with_no_transcripts_says_so(home: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "empty"))
    result = CliRunner().invoke(cli, ["--home", str(home), "import", "claude-code", "--all"])
    assert result.exit_code == 0 and result.stdout.startswith("added 0 turns from 0 sessions")


def test_claude_code_options_are_refused_for_a_file_import(home: Path, tmp_path: Path) -> None:
    export = tmp_path / "export.jsonl"
    export.write_text("")
    result = CliRunner().invoke(cli, ["--home", str(home), "import", str(export), "--all"])
    assert result.exit_code == 2 and "'import claude-code' only" in result.output
    missing = CliRunner().invoke(cli, ["--home", str(home), "import", str(tmp_path / "no")])
    assert missing.exit_code == 2 and "no such file" in missing.output
