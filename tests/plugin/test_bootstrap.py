"""The first-use setup of the plugin's own environment (plugin/lib/bootstrap.py) with real
venv and pip installs. To stay minutes-cheap these install the package with no extras
(`AIDE_MEMOIRE_PLUGIN_EXTRAS=none`, documented) and then with `vectors`; the full default
(`all`, with the pinned CPU torch) runs in tests/e2e/test_plugin_self_setup.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from aide_memoire import __version__

from .conftest import BARE_PATH, LAUNCHER, PLUGIN, pip_configuration

pytestmark = pytest.mark.slow

def _env(tmp_path: Path, extras: str, **more: str) -> dict[str, str]:
    return {"PATH": BARE_PATH, "HOME": str(tmp_path), "AIDE_MEMOIRE_PLUGIN_EXTRAS": extras,
            "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"), **pip_configuration(), **more}


def _start(script: Path, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([str(script), *args], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _copied_plugin(tmp_path: Path) -> tuple[Path, Path]:
    """The plugin as an installed copy is: its own folder, symlinks resolved, no checkout
    around it. Returns its MCP and hook launchers."""
    copy = tmp_path / "plugin-copy"
    shutil.copytree(PLUGIN, copy, symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    assert not any(p.is_symlink() for p in copy.rglob("*"))
    return copy / "bin" / "aide-memoire-mcp", copy / "bin" / "aide-memoire-hook"


def test_concurrent_first_starts_share_one_setup_and_later_starts_reuse_it(
        tmp_path: Path) -> None:
    server_launcher, hook_launcher = _copied_plugin(tmp_path)
    env = _env(tmp_path, "none")
    data = tmp_path / "data"
    stamp = data / "venv" / ".aide-memoire-stamp"
    hook = _start(hook_launcher, "session-start", env=env)
    servers = [_start(server_launcher, "--help", env=env) for _ in range(2)]
    said, _ = hook.communicate('{"hook_event_name": "SessionStart"}', timeout=60)
    # The hook never waits for the setup: it returned while the install ran.
    assert hook.returncode == 0 and not stamp.exists()
    assert "setting up its own environment" in said
    for server in servers:
        out, err = server.communicate(timeout=900)
        assert server.returncode == 0, err
        assert "Run the MCP server" in out  # `aide-memoire serve --help` from the new env
        assert "aide-memoire setup [" in err  # progress, on stderr
    log = (data / "setup.log").read_text()
    assert log.count("first-use setup") == 1, log
    key = f"aide-memoire {__version__} extras=none torch=torch==2.13.0"
    assert stamp.read_text().strip() == key

    # Ready: a later start runs the command and does not set up again.
    again = subprocess.run([str(server_launcher), "--help"], env=env, capture_output=True,
                           text=True, timeout=120, check=False)
    assert again.returncode == 0 and again.stderr == ""
    assert (data / "setup.log").read_text() == log

    # Other extras asked for: a new setup with them, replacing the old environment.
    vectors = _env(tmp_path, "vectors")
    redone = subprocess.run([str(server_launcher), "--help"], env=vectors,
                            capture_output=True, text=True, timeout=900, check=False)
    assert redone.returncode == 0, redone.stderr
    assert "extras=vectors" in stamp.read_text()
    probe = subprocess.run([str(data / "venv" / "bin" / "python"), "-c", "import sqlite_vec"],
                           capture_output=True, text=True, timeout=60, check=False)
    assert probe.returncode == 0, probe.stderr
    assert not (data / "src").exists()  # the source copy is cleaned up
    assert f"package source from {server_launcher.parents[1] / 'pkg'}" in log


def test_a_failed_setup_is_reported_and_tried_again(tmp_path: Path) -> None:
    env = _env(tmp_path, "embeddings", AIDE_MEMOIRE_PLUGIN_TORCH="torch==0.0.0")
    data = tmp_path / "data"
    for _ in range(2):
        done = subprocess.run([str(LAUNCHER)], env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=600, check=False)
        assert done.returncode == 127 and done.stdout == ""
        assert "setting up the environment failed" in done.stderr
        assert str(data / "setup.log") in done.stderr
        assert "torch==0.0.0" in (data / "setup.log").read_text()
        assert not (data / "venv" / ".aide-memoire-stamp").exists()
