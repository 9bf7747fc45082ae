"""plugin/bin/aide-memoire-mcp and aide-memoire-hook: the user's own `aide-memoire` wins
(AIDE_MEMOIRE_BIN, PATH); a wrong AIDE_MEMOIRE_BIN is named; without a Python to set up
the plugin's own environment the server says so and a hook lets the session through.
(The first-use setup itself: test_bootstrap.py.)"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from aide_memoire.engine.core.projects import project_namespace
from mcp import Client, StdioServerParameters

from .conftest import BARE_PATH, LAUNCHER, PLUGIN, VENV_BIN

HOOK = PLUGIN / "bin" / "aide-memoire-hook"


def _launch(script: Path, *args: str, env: dict[str, str],
            stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(script), *args], env=env, capture_output=True, text=True,
                          input=stdin, timeout=60, check=False)


def _no_python_path(tmp_path: Path) -> str:
    """A PATH with what the launchers need from the system and no Python at all."""
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("sh", "cat", "sed", "dirname", "mktemp", "rm", "setsid"):
        found = shutil.which(name, path=BARE_PATH)
        if found:
            (tools / name).symlink_to(found)
    return str(tools)


def test_a_wrong_aide_memoire_bin_is_named(tmp_path: Path) -> None:
    env = {"PATH": BARE_PATH, "HOME": str(tmp_path), "AIDE_MEMOIRE_BIN": str(tmp_path / "nope")}
    served = _launch(LAUNCHER, env=env)
    assert served.returncode == 127 and served.stdout == ""  # stdout is the MCP protocol's
    assert f"AIDE_MEMOIRE_BIN is set to '{tmp_path / 'nope'}'" in served.stderr
    hooked = _launch(HOOK, "user-prompt-submit", env=env, stdin='{"prompt": "hi"}')
    assert hooked.returncode == 0 and hooked.stdout == ""  # the prompt goes through
    assert "AIDE_MEMOIRE_BIN is set to" in hooked.stderr
    assert not (tmp_path / ".claude").exists()  # no setup of a second environment either


def test_without_python_the_server_says_what_is_missing(tmp_path: Path) -> None:
    env = {"PATH": _no_python_path(tmp_path), "HOME": str(tmp_path)}
    served = _launch(LAUNCHER, env=env)
    assert served.returncode == 127 and served.stdout == ""
    assert "no Python 3.11 or newer found" in served.stderr
    assert "AIDE_MEMOIRE_PYTHON" in served.stderr
    for event in ("session-start", "user-prompt-submit"):
        hooked = _launch(HOOK, event, env=env, stdin="{}")
        assert hooked.returncode == 0 and hooked.stdout == "", hooked.stderr
    detached = _launch(HOOK, "--detach", "stop", env=env, stdin="{}")
    assert detached.returncode == 0 and detached.stdout == ""


@pytest.mark.parametrize("how", ["path", "aide_memoire_bin"])
async def test_with_aide_memoire_it_serves_the_project_namespace(tmp_path: Path, how: str) -> None:
    project = tmp_path / "My Project"
    project.mkdir()
    env = {"HOME": str(tmp_path), "AIDE_MEMOIRE_HOME": str(tmp_path / "store"),
           "AIDE_MEMOIRE_EMBEDDING_MODEL": "none", "CLAUDE_PROJECT_DIR": str(project)}
    if "PYTHONPATH" in os.environ:  # this checkout's code, not the shared install's
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    if how == "path":
        env["PATH"] = f"{VENV_BIN}:{BARE_PATH}"
    else:
        env.update(PATH=BARE_PATH, AIDE_MEMOIRE_BIN=str(VENV_BIN / "aide-memoire"))
    params = StdioServerParameters(command="sh", args=[str(LAUNCHER)], env=env)
    async with Client(params) as client:
        stored = await client.call_tool("memory_store", {"content": "The launcher works"})
        assert not stored.is_error, stored.content
        assert stored.structured_content["namespace"] == project_namespace(project)
        status = await client.call_tool("memory_status", {})
        assert status.structured_content["default_namespace"] == project_namespace(project)
    assert (tmp_path / "store" / "memory.db").exists()
    # The user's command was used: the plugin set up no environment of its own.
    assert not (tmp_path / ".claude" / "plugins" / "data").exists()
