"""plugin/bin/aide-memoire-mcp and aide-memoire-hook, run as Claude Code runs them: the file
itself, no shell. The user's own `aide-memoire` wins (AIDE_MEMOIRE_BIN, PATH); a wrong
AIDE_MEMOIRE_BIN is named; without a Python to set up the plugin's own environment the
server says so and a hook lets the session through; a detached capture runs on after the
launcher has returned. (The first-use setup itself: test_bootstrap.py.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from aide_memoire.engine.core.projects import project_namespace
from mcp import Client, StdioServerParameters

from .conftest import BARE_PATH, LAUNCHER, PLUGIN, VENV_BIN

HOOK = PLUGIN / "bin" / "aide-memoire-hook"


def _launch(script: Path, *args: str, env: dict[str, str],
            stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(script), *args], env=env, capture_output=True, text=True,
                          input=stdin, timeout=60, check=False)


def _old_python(tmp_path: Path) -> str:
    """A Python that says it is older than 3.11 (the launchers themselves run on any
    Python 3; building the plugin's environment needs 3.11)."""
    old = tmp_path / "tools" / "python3.9"
    old.parent.mkdir()
    old.write_text(f"#!{shutil.which('python3', path=BARE_PATH)}\n"
                   "import sys\nsys.exit(1)  # as `sys.version_info < (3, 11)` would\n")
    old.chmod(0o755)
    return str(old)


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
    env = {"PATH": BARE_PATH, "HOME": str(tmp_path), "AIDE_MEMOIRE_PYTHON": _old_python(tmp_path)}
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
    params = StdioServerParameters(command=str(LAUNCHER), args=[], env=env)
    async with Client(params) as client:
        stored = await client.call_tool("memory_store", {"content": "The launcher works"})
        assert not stored.is_error, stored.content
        assert stored.structured_content["namespace"] == project_namespace(project)
        status = await client.call_tool("memory_status", {})
        assert status.structured_content["default_namespace"] == project_namespace(project)
    assert (tmp_path / "store" / "memory.db").exists()
    # The user's command was used: the plugin set up no environment of its own.
    assert not (tmp_path / ".claude" / "plugins" / "data").exists()


def test_a_detached_capture_gets_the_hook_json_and_runs_on_after_the_launcher(
    tmp_path: Path,
) -> None:
    # The user's command stands in for `aide-memoire hook stop`: it waits for the launcher
    # to have returned (a file the test writes), then records its arguments and stdin.
    record, go = tmp_path / "record.json", tmp_path / "go"
    fake = tmp_path / "aide-memoire"
    fake.write_text(
        f"#!{shutil.which('python3', path=BARE_PATH)}\n"
        "import json, os, sys, time\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.05)\n"
        "data = sys.stdin.read()\n"
        f"open({str(record) + '.part'!r}, 'w').write("
        "json.dumps([sys.argv[1:], data, os.getsid(0)]))\n"
        f"os.replace({str(record) + '.part'!r}, {str(record)!r})\n")  # whole, or not there
    fake.chmod(0o755)
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {"PATH": BARE_PATH, "HOME": str(tmp_path), "AIDE_MEMOIRE_BIN": str(fake),
           "TMPDIR": str(temp)}
    # Larger than any pipe holds (Linux grows one to 1 MB at most): the launcher hands the
    # JSON over in a file, on every OS, and returns while the child has read nothing.
    payload = ('{"session_id": "s", "transcript_path": "/t.jsonl", "big": "'
               + "x" * 3_000_000 + '"}')
    done = _launch(HOOK, "--detach", "stop", env=env, stdin=payload)
    assert done.returncode == 0 and done.stdout == ""
    assert not record.exists()  # the launcher returned while the capture still waits
    assert list(temp.iterdir()) == []  # the hand-over file has no name left to find
    go.touch()
    for _ in range(600):
        if record.exists() and record.read_text():
            break
        time.sleep(0.05)
    args, seen, session = json.loads(record.read_text())
    assert args == ["hook", "stop"] and seen == payload
    assert session != os.getsid(0)  # its own session: Claude Code's exit does not end it


def test_the_launchers_are_python_and_need_no_shell() -> None:
    for name in ("aide-memoire-mcp", "aide-memoire-hook"):
        first = (PLUGIN / "bin" / name).read_text().splitlines()[0]
        assert first == "#!/usr/bin/env python3", name
    assert not list(PLUGIN.rglob("*.sh"))
    server = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["aide-memoire"]
    assert server["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/aide-memoire-mcp"
