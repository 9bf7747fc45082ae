"""The default namespace: --namespace, else the client's project folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from aide_memoire import InvalidNamespace
from aide_memoire.mcp.run import default_namespace


def test_explicit_namespace_wins_and_is_validated() -> None:
    assert default_namespace("user:alice", environ={"CLAUDE_PROJECT_DIR": "/x/y"}) == "user:alice"
    with pytest.raises(InvalidNamespace):
        default_namespace("../etc")


def test_claude_project_dir_then_working_directory() -> None:
    env = {"CLAUDE_PROJECT_DIR": "/home/a/My Project (v2)"}
    assert default_namespace(environ=env, cwd=Path("/elsewhere")) == "project:My-Project-v2"
    assert default_namespace(environ={}, cwd=Path("/srv/app.io")) == "project:app.io"
    assert default_namespace(environ={}, cwd=Path("/")) == "project:root"
