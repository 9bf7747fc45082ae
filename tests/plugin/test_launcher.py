"""plugin/bin/aide-memoire-mcp: starts the real server when `aide-memoire` is installed,
and otherwise says how to install it (on stderr) and fails, instead of failing silently."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mcp import Client, StdioServerParameters

from .conftest import BARE_PATH, LAUNCHER, VENV_BIN


def _launch(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(LAUNCHER)], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60, check=False)


def test_without_aide_memoire_it_says_how_to_install(tmp_path: Path) -> None:
    done = _launch({"PATH": BARE_PATH, "HOME": str(tmp_path)})
    assert done.returncode == 127
    assert done.stdout == ""  # stdout belongs to the MCP protocol
    assert "`aide-memoire` command was not found" in done.stderr
    assert "pipx install 'aide-memoire[all]'" in done.stderr
    assert "pip install 'aide-memoire[all]'" in done.stderr
    assert "make setup" in done.stderr


def test_a_wrong_aide_memoire_bin_is_named(tmp_path: Path) -> None:
    done = _launch({"PATH": BARE_PATH, "HOME": str(tmp_path),
                    "AIDE_MEMOIRE_BIN": str(tmp_path / "nope")})
    assert done.returncode == 127
    assert f"AIDE_MEMOIRE_BIN is set to '{tmp_path / 'nope'}'" in done.stderr


@pytest.mark.parametrize("how", ["path", "aide_memoire_bin"])
async def test_with_aide_memoire_it_serves_the_project_namespace(tmp_path: Path, how: str) -> None:
    project = tmp_path / "My Project"
    project.mkdir()
    env = {"HOME": str(tmp_path), "AIDE_MEMOIRE_HOME": str(tmp_path / "store"),
           "AIDE_MEMOIRE_EMBEDDING_MODEL": "none", "CLAUDE_PROJECT_DIR": str(project)}
    if how == "path":
        env["PATH"] = f"{VENV_BIN}:{BARE_PATH}"
    else:
        env.update(PATH=BARE_PATH, AIDE_MEMOIRE_BIN=str(VENV_BIN / "aide-memoire"))
    params = StdioServerParameters(command="sh", args=[str(LAUNCHER)], env=env)
    async with Client(params) as client:
        stored = await client.call_tool("memory_store", {"content": "The launcher works"})
        assert not stored.is_error, stored.content
        assert stored.structured_content["namespace"] == "project:My-Project"
        status = await client.call_tool("memory_status", {})
        assert status.structured_content["default_namespace"] == "project:My-Project"
    assert (tmp_path / "store" / "memory.db").exists()
