"""A client nobody here wrote: the Claude Code CLI adds `aide-memoire serve` and connects.

`make test` installs the pinned CLI into .tools/ first. Run by hand without it, this test
is skipped; in CI (CI=true) a missing CLI is a failure, not a skip.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..pinned_clients import CLAUDE, require
from .conftest import BIN


def _claude(args: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", ""),
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    return subprocess.run([str(CLAUDE), *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)


def test_claude_code_connects_to_the_server(tmp_path: Path) -> None:
    require(CLAUDE, "Claude Code CLI")
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir(parents=True)
    store = tmp_path / "store"
    added = _claude(["mcp", "add", "aide-memoire", "-e", f"AIDE_MEMOIRE_HOME={store}", "--",
                     str(BIN / "aide-memoire"), "serve"], home, project)
    assert added.returncode == 0, added.stderr
    got = _claude(["mcp", "get", "aide-memoire"], home, project)
    assert got.returncode == 0, got.stderr
    assert "✔ Connected" in got.stdout, got.stdout + got.stderr
    assert f"{BIN / 'aide-memoire'}" in got.stdout
    # Claude Code's health check ran the real server on the store it was given: the
    # server makes the store's folder at spawn (the store itself opens at the first tool
    # call, so a handshake alone leaves no memory.db).
    assert store.is_dir()
