"""Fixtures for the plugin tests: paths of the repository's client files, and the real
Claude Code CLI (installed by `make test` into .tools/; skipped when missing, except in
CI, where a missing CLI fails)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ..pinned_clients import CLAUDE, require

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "plugin"
LAUNCHER = PLUGIN / "bin" / "aide-memoire-mcp"
# The venv's bin folder: where `aide-memoire` is installed for the tests.
VENV_BIN = Path(sys.executable).parent
# A PATH with the shell and coreutils but no `aide-memoire`.
BARE_PATH = "/usr/bin:/bin"

Claude = Callable[..., subprocess.CompletedProcess[str]]


def front_matter(path: Path) -> dict[str, object]:
    """The YAML front matter of a Markdown file (what Claude Code parses)."""
    import yaml

    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path} has no front matter"
    head = text[4:].split("\n---\n", 1)[0]
    data = yaml.safe_load(head)
    assert isinstance(data, dict), f"{path}: front matter is not a mapping"
    return data


def pip_configuration() -> dict[str, str]:
    """This machine's pip configuration (where its CPU torch and other wheels come from),
    which lives in the real HOME: a fresh HOME keeps it, as a user's own settings would
    be kept. Without it, pip on Linux resolves `torch==2.13.0` to the multi-GB CUDA build
    (docs/install.md: AIDE_MEMOIRE_PLUGIN_TORCH_INDEX)."""
    kept = {k: v for k, v in os.environ.items() if k.startswith("PIP_")}
    user = Path("~/.config/pip/pip.conf").expanduser()
    if "PIP_CONFIG_FILE" not in kept and user.is_file():
        kept["PIP_CONFIG_FILE"] = str(user)
    return kept


@pytest.fixture
def claude(tmp_path: Path) -> Claude:
    """Run the real Claude Code CLI in a throwaway HOME; extra env vars as keywords."""
    require(CLAUDE, "Claude Code CLI")
    home = tmp_path / "claude-home"
    home.mkdir()

    def run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
        full = {
            "HOME": str(home),
            "PATH": BARE_PATH,
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "MCP_TIMEOUT": "60000",
        }
        full.update(env)
        return subprocess.run([str(CLAUDE), *args], env=full, cwd=cwd, capture_output=True,
                              text=True, timeout=180, check=False)

    return run
