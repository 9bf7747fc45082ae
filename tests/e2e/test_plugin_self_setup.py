"""Installing the plugin is the only step: a fresh HOME with nothing but the plugin (no
`aide-memoire` on PATH, no AIDE_MEMOIRE_BIN; only the system's sh and Python 3.11+), and
after the first-use setup `claude mcp list` shows the plugin's server Connected.

This runs the full default setup (`all` extras, the pinned CPU torch) with a cold pip
cache in the temporary HOME, as a user's first start does: minutes, not seconds (376 s
on the 2-core reference machine under load). AIDE_MEMOIRE_PLUGIN_EXTRAS in the outer
environment (e.g. `vectors`: no torch, about a tenth of the time) is passed on, as a user
would set it, and the checks follow what it asks for.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from ..plugin.conftest import BARE_PATH, pip_configuration
from .conftest import BASE_ENV, install_plugin, require_claude, run_claude, wait_for

pytestmark = pytest.mark.slow

SETUP_SECONDS = 1800.0  # a bound on a cold install on a loaded machine, not a target


def _server_line(listed: str) -> str:
    return next((x for x in listed.splitlines() if x.startswith("plugin:aide-memoire:")), "")


def test_fresh_home_sets_itself_up_and_connects(tmp_path: Path) -> None:
    require_claude()
    home, store, project = tmp_path / "home", tmp_path / "store", tmp_path / "work" / "app"
    home.mkdir()
    project.mkdir(parents=True)
    env = {**BASE_ENV, "HOME": str(home), "PATH": BARE_PATH, "AIDE_MEMOIRE_HOME": str(store),
           **pip_configuration()}
    if os.environ.get("AIDE_MEMOIRE_PLUGIN_EXTRAS"):
        env["AIDE_MEMOIRE_PLUGIN_EXTRAS"] = os.environ["AIDE_MEMOIRE_PLUGIN_EXTRAS"]
    install_plugin(env, project)
    cache = next((home / ".claude" / "plugins" / "cache").glob("*/aide-memoire/*"))
    # The installed copy ships the package source as real files (symlinks resolved).
    assert not (cache / "pkg" / "server").is_symlink()
    assert (cache / "pkg" / "server" / "aide_memoire" / "_version.py").is_file()

    data = home / ".claude" / "plugins" / "data" / "aide-memoire-aide-memoire"
    try:
        _connects_after_setup(data, project, env, store)
    finally:
        _stop_setup(data)


def _stop_setup(data: Path) -> None:
    """End a setup worker this test started that is still running (a failed assertion
    must not leave an install going): by the pid it wrote, with its process group."""
    try:
        pid = int((data / "setup.lock").read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return
    if b"bootstrap.py" in cmdline and str(data).encode() in cmdline:
        os.killpg(pid, signal.SIGTERM)


def _connects_after_setup(data: Path, project: Path, env: dict[str, str],
                          store: Path) -> None:
    # The first start sets the environment up in the plugin's data folder; Claude Code
    # stops waiting long before a cold install ends, and the install carries on.
    first = run_claude("mcp", "list", cwd=project, env={**env, "MCP_TIMEOUT": "5000"})
    assert "plugin:aide-memoire:aide-memoire:" in first.stdout, first.stdout + first.stderr
    log = data / "setup.log"
    assert log.exists() and "first-use setup" in log.read_text()
    started = time.monotonic()
    stamp = data / "venv" / ".aide-memoire-stamp"
    wait_for(lambda: stamp.exists() or (data / "setup.failed").exists(),
             "the first-use setup", timeout=SETUP_SECONDS)
    assert not (data / "setup.failed").exists(), log.read_text()[-3000:]
    print(f"first-use setup finished {time.monotonic() - started:.0f} s after the first "
          f"mcp list")
    extras = env.get("AIDE_MEMOIRE_PLUGIN_EXTRAS", "all")
    print(f"first-use setup with extras={extras}")
    assert stamp.read_text().startswith("aide-memoire ")
    assert f"extras={extras} " in stamp.read_text()

    listed = run_claude("mcp", "list", cwd=project, env=env)
    line = _server_line(listed.stdout)
    assert "✔ Connected" in line, listed.stdout + listed.stderr + log.read_text()[-2000:]
    # The plugin's own server ran on that store: it made the store's folder at once (the
    # store itself opens at the first tool call, which a health check never makes).
    assert store.is_dir()
    # One setup only, and later starts reuse it.
    assert log.read_text().count("first-use setup") == 1
    again = run_claude("mcp", "list", cwd=project, env=env)
    assert "✔ Connected" in _server_line(again.stdout)
    assert log.read_text().count("first-use setup") == 1
    site = next((data / "venv" / "lib").glob("python3*/site-packages"))
    assert (site / "aide_memoire").is_dir() and not (site / "aide_memoire").is_symlink()
    # The CPU build of torch when torch is asked for: no CUDA runtime packages came.
    assert not list(site.glob("nvidia*")), sorted(p.name for p in site.glob("nvidia*"))
    wants_torch = bool({"all", "embeddings"} & set(extras.split(",")))
    assert (site / "torch").is_dir() == wants_torch
