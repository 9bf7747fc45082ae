"""Clients nobody here wrote read what `aide-memoire setup` wrote, in a temporary HOME,
and start the real server over stdio: Codex CLI, Gemini CLI, OpenCode and Claude Code, the
pinned versions `make test` installs into .tools/.

Codex CLI 0.169 has no connection check (`codex mcp list` reads the config only), so the
Codex test reads the server Codex parsed from its own `--json` listing and starts exactly
that command line, environment included, with the SDK's stdio client. Gemini CLI,
OpenCode and Claude Code connect themselves and say so. Run by hand without the CLIs,
these tests are skipped; in CI (CI=true) a missing CLI is a failure.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from aide_memoire.cli.main import cli
from mcp import Client, StdioServerParameters

from ..pinned_clients import NODE_BIN, require
from .conftest import BIN

QUIET = {"DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
         "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "NO_BROWSER": "1",
         "OPENCODE_DISABLE_AUTOUPDATE": "1"}


def _cli(name: str) -> Path:
    return require(NODE_BIN / name)


def _env(home: Path) -> dict[str, str]:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), **QUIET}
    if "PYTHONPATH" in os.environ:  # the server the clients start runs the code under test
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def _setup(home: Path, store: Path, *args: str) -> None:
    env = {"HOME": str(home), "XDG_CONFIG_HOME": "", "CODEX_HOME": ""}
    done = CliRunner().invoke(cli, ["--home", str(store), "setup", *args], env=env,
                              catch_exceptions=False)
    assert done.exit_code == 0, done.stderr


def _run(command: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, env=_env(home), cwd=cwd, capture_output=True, text=True,
                          timeout=180, check=False)


async def test_codex_cli_reads_the_setup_and_its_server_answers(tmp_path: Path) -> None:
    codex = _cli("codex")
    home, store, project = tmp_path / "home", tmp_path / "store", tmp_path / "project"
    project.mkdir(parents=True)
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('# mine\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "other"\n',
                      encoding="utf-8")
    _setup(home, store, "codex")
    listed = _run([str(codex), "mcp", "list", "--json"], home, project)
    assert listed.returncode == 0, listed.stderr
    servers = {s["name"]: s for s in json.loads(listed.stdout)}
    assert set(servers) == {"other", "aide-memoire"}  # the merge kept the other server
    transport = servers["aide-memoire"]["transport"]
    assert servers["aide-memoire"]["enabled"] is True and transport["type"] == "stdio"
    assert transport["command"] == str(BIN / "aide-memoire")
    assert transport["args"] == ["serve"]
    assert transport["env"] == {"AIDE_MEMOIRE_HOME": str(store.resolve())}
    # Codex starts the command with its environment plus the entry's env: the same here.
    env = {**_env(home), **transport["env"], "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"}
    params = StdioServerParameters(command=transport["command"], args=transport["args"],
                                   env=env, cwd=str(project))
    async with Client(params, mode="legacy") as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        assert "memory_recall" in tools
        stored = await client.call_tool("memory_store", {"content": "Codex was here"})
        assert not stored.is_error
    assert (store / "memory.db").exists()


def test_gemini_cli_connects_to_the_server_setup_wrote(tmp_path: Path) -> None:
    gemini = _cli("gemini")
    home, store, project = tmp_path / "home", tmp_path / "store", tmp_path / "project"
    project.mkdir(parents=True)
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    # Folder trust off (a fresh HOME would otherwise hold back this folder's servers),
    # with a comment, which Gemini's settings allow and the merge must keep.
    settings.write_text('{\n  // trust every folder in this throwaway HOME\n  "security": '
                        '{"folderTrust": {"enabled": false}}\n}\n', encoding="utf-8")
    _setup(home, store, "gemini")
    assert "// trust every folder" in settings.read_text(encoding="utf-8")
    listed = _run([str(gemini), "mcp", "list"], home, project)
    assert listed.returncode == 0, listed.stderr
    out = listed.stdout + listed.stderr  # 0.61 prints the listing on stderr
    line = next((ln for ln in out.splitlines() if "aide-memoire:" in ln), "")
    assert "- Connected" in line, out
    assert str(BIN / "aide-memoire") in line
    assert store.is_dir()  # the server Gemini started made the store's folder


def test_opencode_connects_to_the_server_setup_wrote(tmp_path: Path) -> None:
    opencode = _cli("opencode")
    home, store, project = tmp_path / "home", tmp_path / "store", tmp_path / "project"
    project.mkdir(parents=True)
    config = project / "opencode.json"
    # OpenCode reads JSONC: a comment and another setting the merge must keep.
    config.write_text('{\n  // this project\'s settings\n  "autoupdate": false\n}\n',
                      encoding="utf-8")
    _setup(home, store, "opencode", "--project", "--dir", str(project))
    assert "// this project's settings" in config.read_text(encoding="utf-8")
    listed = _run([str(opencode), "mcp", "list"], home, project)
    assert listed.returncode == 0, listed.stderr
    out = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr)
    assert re.search(r"aide-memoire\s+connected", out), out
    assert str(BIN / "aide-memoire") in out
    assert store.is_dir()


@pytest.mark.parametrize("scope", ["user", "project"])
def test_claude_code_connects_to_the_server_setup_wrote(tmp_path: Path, scope: str) -> None:
    claude = _cli("claude")
    home, store, project = tmp_path / "home", tmp_path / "store", tmp_path / "project"
    project.mkdir(parents=True)
    if scope == "project":
        _setup(home, store, "claude-code", "--project", "--dir", str(project))
        assert (project / ".mcp.json").exists()
        # Claude Code asks a person once before it runs a project's .mcp.json server;
        # setup leaves that to them. Here the approval is given as Claude Code records it.
        pending = _run([str(claude), "mcp", "get", "aide-memoire"], home, project)
        assert "Pending approval" in pending.stdout, pending.stdout + pending.stderr
        state = home / ".claude.json"
        data = json.loads(state.read_text(encoding="utf-8")) if state.exists() else {}
        data.setdefault("projects", {})[str(project)] = {
            "enabledMcpjsonServers": ["aide-memoire"], "hasTrustDialogAccepted": True}
        state.write_text(json.dumps(data), encoding="utf-8")
    else:
        _setup(home, store, "claude-code")
    got = _run([str(claude), "mcp", "get", "aide-memoire"], home, project)
    assert got.returncode == 0, got.stderr
    out = got.stdout + got.stderr
    assert "✔ Connected" in out, out
    assert ("User config" if scope == "user" else "Project config") in out
    assert str(BIN / "aide-memoire") in out
