"""The launcher and the first-use setup across operating systems, and the launcher's one
interpreter for a hook.

Nothing here runs Windows: its venv layout and lock are checked as path logic and as the
code each OS takes (docs/hooks.md says what is unverified). The in-process hook runs for
real: the plugin's hook launcher under a base Python, with a real venv of that Python as
the command's environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from .conftest import BARE_PATH, PLUGIN

sys.path.insert(0, str(PLUGIN / "lib"))
import bootstrap  # noqa: E402
import launch  # noqa: E402

HOOK = PLUGIN / "bin" / "aide-memoire-hook"


@pytest.mark.parametrize(("windows", "command", "python"), [
    (True, ("Scripts", "aide-memoire.exe"), ("Scripts", "python.exe")),
    (False, ("bin", "aide-memoire"), ("bin", "python")),
])
def test_both_venv_layouts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, windows: bool,
                           command: tuple[str, str], python: tuple[str, str]) -> None:
    venv = tmp_path / "venv"
    assert bootstrap.venv_file(venv, "aide-memoire", windows) == venv.joinpath(*command)
    assert bootstrap.venv_file(venv, "python", windows) == venv.joinpath(*python)
    monkeypatch.setattr(launch, "WINDOWS", windows)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path))
    # The launcher and the setup name the same program for a finished environment.
    assert launch.venv_command() == venv.joinpath(*command)
    site = launch.site_packages(str(venv), windows, (3, 12))
    expected = ("Lib", "site-packages") if windows else ("lib", "python3.12", "site-packages")
    assert Path(site) == venv.joinpath(*expected)


def test_the_setup_lock_is_exclusive_and_free_once_closed(tmp_path: Path) -> None:
    path = tmp_path / "setup.lock"
    held = bootstrap._try_lock(path)
    assert held is not None
    probe = subprocess.run(  # another process, as a second hook would be
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import bootstrap;"
         " from pathlib import Path; sys.exit(bootstrap._try_lock(Path(sys.argv[2])) is None)",
         str(PLUGIN / "lib"), str(path)], check=False)
    assert probe.returncode == 1
    os.close(held)
    again = bootstrap._try_lock(path)
    assert again is not None
    os.close(again)


def test_the_setup_runs_no_shell_and_no_posix_only_call() -> None:
    source = (PLUGIN / "lib" / "bootstrap.py").read_text()
    for posix_only in ("import fcntl\nimport", "os.pwrite", "shell=True", '"bin" / "python"'):
        assert posix_only not in source


@pytest.mark.parametrize(("first", "found"), [
    ("#!/opt/env/bin/python3.11\n", "/opt/env/bin/python3.11"),
    ("#!/usr/bin/env python3\n", None),  # not followed: PATH decides at run time
    ("#!/opt/my env/bin/python\n", None),
    ("import sys\n", None),
])
def test_which_interpreter_a_console_script_names(tmp_path: Path, first: str,
                                                   found: str | None) -> None:
    script = tmp_path / "aide-memoire"
    script.write_text(first + "import sys\n")
    assert launch._interpreter(str(script)) == found


def _base_python() -> str:
    base = getattr(sys, "_base_executable", "") or sys.executable
    return os.path.realpath(base)


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real venv of the base Python (no pip), seeing this checkout's package and the
    test environment's libraries through a .pth, as the plugin's own environment would
    hold them installed."""
    venv = tmp_path_factory.mktemp("plugin-env") / "venv"
    subprocess.run([_base_python(), "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=300)
    site = Path(launch.site_packages(str(venv)))
    server = str(Path(__file__).resolve().parents[2] / "server")
    (site / "checkout.pth").write_text(f"{server}\n{sysconfig.get_paths()['purelib']}\n")
    return venv


def _console_script(venv: Path, marker: Path) -> Path:
    """`aide-memoire` as pip writes it into the venv, plus a marker: the file only runs
    when the launcher execs it."""
    script = venv / "bin" / "aide-memoire"
    script.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\n"
                      f"open({str(marker)!r}, 'a').write('ran\\n')\n"
                      "from aide_memoire.cli.entry import main\nsys.exit(main())\n")
    script.chmod(0o755)
    return script


@pytest.mark.skipif(os.name == "nt", reason="POSIX console scripts")
def test_a_prompt_hook_runs_in_the_launchers_interpreter(plugin_env: Path,
                                                         tmp_path: Path) -> None:
    from aide_memoire import Memory, Settings
    from aide_memoire.engine.core.projects import project_namespace

    project, home, marker = tmp_path / "shop", tmp_path / "store", tmp_path / "ran"
    project.mkdir()
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        memory.store("The billing Redis listens on port 6380 since the migration",
                     namespace=project_namespace(project))
    tools = tmp_path / "tools"  # `python3` on PATH is the venv's base Python
    tools.mkdir()
    (tools / "python3").symlink_to(_base_python())
    env = {"PATH": f"{tools}:{BARE_PATH}", "HOME": str(tmp_path),
           "AIDE_MEMOIRE_HOME": str(home), "AIDE_MEMOIRE_HOOK_DAEMON": "false",
           "AIDE_MEMOIRE_BIN": str(_console_script(plugin_env, marker))}
    answers = []
    for run, extra in enumerate(({}, {"AIDE_MEMOIRE_PLUGIN_EXEC": "1"})):
        ask = {"session_id": f"s{run}", "cwd": str(project),
               "prompt": "which port does the billing Redis listen on?"}
        done = subprocess.run([str(HOOK), "user-prompt-submit"], input=json.dumps(ask),
                              env={**env, **extra}, capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        answers.append(done.stdout)
        # In process the console script never ran; exec'd (the setting) it did.
        assert marker.exists() == bool(extra), (run, done.stderr)
    assert "port 6380" in answers[0] and answers[0] == answers[1]
    # The injection log is written after the answer, by a child the hook leaves.
    log = home / "hooks" / "injections.jsonl"
    deadline = time.monotonic() + 60
    while not log.exists() or len(log.read_text().splitlines()) < 2:
        assert time.monotonic() < deadline, "the injections were never logged"
        time.sleep(0.1)
    assert {json.loads(line)["session_id"] for line in log.read_text().splitlines()} == {
        "s0", "s1"}


@pytest.mark.skipif(os.name == "nt", reason="POSIX console scripts")
def test_another_python_is_not_adopted(plugin_env: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "pyvenv.cfg").write_text("home = /nonexistent\nversion = 3.0.1\n")
    (other / "bin").mkdir()
    script = other / "bin" / "aide-memoire"
    script.write_text(f"#!{other / 'bin' / 'python'}\n")
    before = list(sys.path)
    assert launch.adopt(str(script)) is None
    assert sys.path == before
