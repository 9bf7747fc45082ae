"""The default namespace: --namespace, else the client's project folder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aide_memoire import InvalidNamespace
from aide_memoire.mcp.run import default_namespace


def test_explicit_namespace_wins_and_is_validated() -> None:
    assert default_namespace("user:alice", environ={"CLAUDE_PROJECT_DIR": "/x/y"}) == "user:alice"
    with pytest.raises(InvalidNamespace):
        default_namespace("../etc")


def test_claude_project_dir_then_working_directory() -> None:
    # Readable folder name plus a hash of the project root (engine/core/projects.py).
    env = {"CLAUDE_PROJECT_DIR": "/home/a/My Project (v2)"}
    assert re.fullmatch(r"project:My-Project-v2-[0-9a-f]{6}",
                        default_namespace(environ=env, cwd=Path("/elsewhere")))
    assert re.fullmatch(r"project:app\.io-[0-9a-f]{6}",
                        default_namespace(environ={}, cwd=Path("/srv/app.io")))
    assert re.fullmatch(r"project:root-[0-9a-f]{6}", default_namespace(environ={}, cwd=Path("/")))
