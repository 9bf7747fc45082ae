"""One default namespace everywhere: the CLI run inside a project uses the project's
namespace (as the MCP server and the hooks do), ``default`` outside any project, and
``status`` says which one a command would use."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from aide_memoire import Memory, Settings
from aide_memoire.cli.hook import run_hook
from aide_memoire.cli.main import cli
from aide_memoire.engine.core.projects import project_namespace

NOTE = "The staging database was moved to the orchid cluster in eu-west-3 last week."
PROMPT = "Which cluster does the staging database live on now?"


def _cli(home: Path, cwd: Path, *args: str, env: dict[str, str | None] | None = None) -> str:
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(cli, ["--home", str(home), *args], catch_exceptions=False,
                                    env={"CLAUDE_PROJECT_DIR": None, **(env or {})})
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _namespaces(home: Path) -> dict[str, int]:
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        return dict(memory.status().namespaces)


def test_store_in_a_project_is_what_the_prompt_hook_there_recalls(home: Path,
                                                                  project: Path) -> None:
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    _cli(home, sub, "store", NOTE)  # from a subfolder: the same project
    assert _namespaces(home) == {project_namespace(project): 1}
    ask = {"session_id": "s1", "cwd": str(project), "prompt": PROMPT}
    text = run_hook("user-prompt-submit", json.dumps(ask).encode(), home)
    assert "orchid cluster" in text
    # And the CLI reads back from the same place without being told.
    found = json.loads(_cli(home, project, "recall", "orchid cluster", "--json"))
    assert any("orchid" in hit["content"] for hit in found["hits"]), found


def test_outside_any_project_the_cli_uses_default(home: Path, tmp_path: Path) -> None:
    plain = tmp_path / "not-a-project"
    plain.mkdir()
    _cli(home, plain, "store", NOTE)
    assert _namespaces(home) == {"default": 1}


def test_claude_project_dir_names_the_project(home: Path, tmp_path: Path,
                                              project: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _cli(home, elsewhere, "store", NOTE, env={"CLAUDE_PROJECT_DIR": str(project)})
    assert _namespaces(home) == {project_namespace(project): 1}


def test_an_explicit_namespace_still_wins(home: Path, project: Path) -> None:
    _cli(home, project, "store", NOTE, "-n", "team-notes")
    assert _namespaces(home) == {"team-notes": 1}


@pytest.mark.parametrize("inside", [True, False])
def test_status_says_which_namespace_a_command_would_use(home: Path, project: Path,
                                                         tmp_path: Path, inside: bool) -> None:
    where = project if inside else tmp_path
    report = json.loads(_cli(home, where, "status", "--json"))
    expected = project_namespace(project) if inside else "default"
    assert report["cli_namespace"]["namespace"] == expected
    text = _cli(home, where, "status")
    line = next(x for x in text.splitlines() if x.startswith("namespace "))
    assert expected in line and ("project" in line if inside else "not inside" in line)
