"""Project identity: distinct for distinct checkouts, stable across sessions."""

from __future__ import annotations

import subprocess
from pathlib import Path

from aide_memoire.engine.core.projects import project_for, project_namespace
from aide_memoire.mcp.run import default_namespace

from .conftest import git_project


def test_two_checkouts_named_app_are_distinct_and_stable(tmp_path: Path) -> None:
    one = git_project(tmp_path / "work" / "app")
    two = git_project(tmp_path / "clients" / "app")
    first, second = project_namespace(one), project_namespace(two)
    assert first != second
    assert first.startswith("project:app-") and second.startswith("project:app-")
    assert project_namespace(one) == first  # stable: a later session gets the same one


def test_a_subfolder_belongs_to_its_repository(project: Path) -> None:
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    assert project_namespace(deep) == project_namespace(project)
    assert project_for(deep).root == project
    assert project_for(deep).git


def test_a_folder_outside_git_is_its_own_project(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    found = project_for(plain)
    assert not found.git and found.root == plain
    assert found.namespace.startswith("project:notes-")
    assert found.legacy == "project:notes"


def test_a_linked_worktree_shares_its_main_checkout(project: Path, tmp_path: Path) -> None:
    run = {"cwd": project, "check": True, "capture_output": True}
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q",
                    "--allow-empty", "-m", "init"], **run)  # type: ignore[call-overload]
    linked = tmp_path / "app-feature"
    subprocess.run(["git", "worktree", "add", "-q", str(linked)], **run)  # type: ignore[call-overload]
    assert project_namespace(linked) == project_namespace(project)


def test_awkward_folder_names_stay_valid(tmp_path: Path) -> None:
    odd = git_project(tmp_path / "My Project (v2)")
    long = git_project(tmp_path / ("x" * 200))
    assert project_namespace(odd).startswith("project:My-Project-v2-")
    assert len(project_namespace(long)) <= 128
    assert project_namespace(long) != project_namespace(tmp_path / ("x" * 199))


def test_mcp_default_namespace_uses_it(project: Path) -> None:
    expected = project_namespace(project)
    assert default_namespace(environ={"CLAUDE_PROJECT_DIR": str(project)}) == expected
    assert default_namespace(environ={}, cwd=project / "sub") == expected
