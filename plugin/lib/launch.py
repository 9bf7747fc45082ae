"""Which `aide-memoire` the plugin runs, and how (standard library only, no shell).

Shared by plugin/bin/aide-memoire-mcp and plugin/bin/aide-memoire-hook, which Claude Code
starts directly (exec form: no shell parses a command line), so that the plugin needs no
POSIX `sh`. In this order:

1. $AIDE_MEMOIRE_BIN, when the user set it (a wrong value is an error, not a fallback:
   the user asked for that program);
2. `aide-memoire` on PATH, then ~/.local/bin/aide-memoire (pipx's folder, often missing
   from the PATH of an editor started from a desktop), so a user who installed the command
   keeps theirs and every client shares one program;
3. the plugin's own environment in its data folder, set up on first use from the package
   source the plugin ships (plugin/pkg) by bootstrap.py.

A hook never waits for that setup (it starts it in the background and lets the session
through) and always exits 0: a memory problem never blocks a prompt. The fast path (an
environment already set up, or the user's command) reads one small file and replaces this
process with the command.
"""

from __future__ import annotations

# Only os and sys at the top: this runs before every prompt, and subprocess, shutil and
# re cost more to import than the rest of the launcher takes (they load when needed).
import os
import sys
from pathlib import Path

WINDOWS = os.name == "nt"
PLUGIN = "aide-memoire-aide-memoire"  # <plugin>-<marketplace>: Claude Code's data folder name
SETUP_NOTE = ("aide-memoire (memory plugin): setting up its own environment on first use, in "
              "the background; memory starts working when it is done (a few minutes, once).")


def root() -> Path:
    given = os.environ.get("CLAUDE_PLUGIN_ROOT")
    return Path(given) if given else Path(__file__).resolve().parent.parent


def data() -> Path:
    # Claude Code passes CLAUDE_PLUGIN_DATA to the plugin's hooks and servers; the fallback
    # is the folder it would name.
    given = os.environ.get("CLAUDE_PLUGIN_DATA")
    return Path(given) if given else Path.home() / ".claude" / "plugins" / "data" / PLUGIN


def venv_command() -> Path:
    venv = data() / "venv"
    return venv / "Scripts" / "aide-memoire.exe" if WINDOWS else venv / "bin" / "aide-memoire"


def extras() -> str:
    # `all` by default (dense recall, code index); e.g. `vectors` (keyword recall, no torch)
    # or `none` (the package alone) where disk or time is short.
    return os.environ.get("AIDE_MEMOIRE_PLUGIN_EXTRAS") or "all"


def torch() -> str:
    # The CPU build of torch, pinned as in the repository's Makefile: an unpinned torch on
    # Linux pulls the multi-GB CUDA build.
    return os.environ.get("AIDE_MEMOIRE_PLUGIN_TORCH") or "torch==2.13.0"


def version() -> str:
    try:
        text = (root() / "pkg" / "server" / "aide_memoire" / "_version.py").read_text()
    except OSError:
        return ""
    for line in text.splitlines():
        if line.startswith('__version__ = "') and line.endswith('"'):
            return line[len('__version__ = "'):-1]
    return ""


def key() -> str:
    """What the environment must have been built as; another version or extras means a
    new setup."""
    return f"aide-memoire {version()} extras={extras()} torch={torch()}"


def ready() -> bool:
    stamp = data() / "venv" / ".aide-memoire-stamp"
    try:
        return venv_command().is_file() and stamp.read_text().strip() == key()
    except OSError:
        return False


def _which(name: str) -> str | None:
    """``shutil.which`` for the fast path (shutil is the larger import)."""
    if WINDOWS:
        import shutil

        return shutil.which(name)
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


class WrongBin(Exception):
    """AIDE_MEMOIRE_BIN names no executable file."""


def user_command() -> str | None:
    """The user's own `aide-memoire`, or None; raises WrongBin (with the message to show)."""
    given = os.environ.get("AIDE_MEMOIRE_BIN")
    if given:
        if os.path.isfile(given) and os.access(given, os.X_OK):
            return given
        raise WrongBin(
            f"aide-memoire plugin: AIDE_MEMOIRE_BIN is set to '{given}', which is not an "
            "executable file.\nPoint it at the aide-memoire command (for example "
            "$HOME/.local/bin/aide-memoire) or unset it to use the plugin's own environment.")
    found = _which("aide-memoire")
    if found:
        return found
    local = Path.home() / ".local" / "bin" / "aide-memoire"
    return str(local) if local.is_file() and os.access(local, os.X_OK) else None


def _python_ok(candidate: str) -> bool:
    import subprocess

    try:
        return subprocess.run([candidate, "-c", "import sys; sys.exit(sys.version_info < (3, 11))"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=30, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def python() -> str | None:
    """A Python 3.11+ to build the environment with ($AIDE_MEMOIRE_PYTHON first, then the
    one running this launcher, then the usual names on PATH)."""
    chosen = os.environ.get("AIDE_MEMOIRE_PYTHON")
    if chosen:
        return chosen if _python_ok(chosen) else None
    if sys.version_info >= (3, 11) and sys.executable:
        return sys.executable
    for name in ("python3.13", "python3.12", "python3.11", "python3", "python", "py"):
        found = _which(name)
        if found and _python_ok(found):
            return found
    return None


NO_PYTHON = ("aide-memoire plugin: no Python 3.11 or newer found (looked for "
             "$AIDE_MEMOIRE_PYTHON, the launcher's own, python3.13, python3.12, python3.11, "
             "python3, python, py; set AIDE_MEMOIRE_PYTHON to choose one). Install Python "
             "3.11+ and restart Claude Code.")


def bootstrap(mode: str, **streams: object) -> int:
    """Start (or join) the first-use setup: `wait` follows its progress on stderr until it
    ends; `nowait` starts it in the background and returns at once."""
    import subprocess

    interpreter = python()
    if interpreter is None:
        print(NO_PYTHON, file=sys.stderr)
        return 1
    command = [interpreter, str(root() / "lib" / "bootstrap.py"), mode, "--data", str(data()),
               "--pkg", str(root() / "pkg"), "--key", key(), "--extras", extras(),
               "--torch", torch(),
               "--torch-index", os.environ.get("AIDE_MEMOIRE_PLUGIN_TORCH_INDEX", "")]
    try:
        return subprocess.run(command, check=False, **streams).returncode  # type: ignore[call-overload]
    except OSError as error:
        print(f"aide-memoire plugin: could not start the setup: {error}", file=sys.stderr)
        return 1


def run(command: str, args: list[str]) -> int:
    """Become ``command args`` (POSIX: this process is replaced, so Claude Code's pipes and
    signals reach the command itself); elsewhere run it and pass its exit code on."""
    if not WINDOWS:
        os.execv(command, [command, *args])
    import subprocess

    return subprocess.call([command, *args])


# -- one interpreter instead of two ----------------------------------------------------
# A prompt or session-start hook otherwise costs two interpreter starts (this launcher,
# then the command's). When the command's Python is this very one, or a venv of the same
# base Python (the plugin's own environment, a pipx install), the launcher imports the
# hook from that environment and runs it here. Anything unusual (a `#!/usr/bin/env` or
# `#!/bin/sh` console script, another Python version, a venv that sees the system's
# packages, a package too old to offer the entry) takes the exec path as before.
IN_PROCESS = ("user-prompt-submit", "session-start")


def _interpreter(command: str) -> str | None:
    """The Python that runs the console script ``command``: its absolute `#!` line, or
    on Windows the python.exe beside the .exe launcher in a venv's Scripts folder."""
    if WINDOWS:
        beside = os.path.join(os.path.dirname(command), "python.exe")
        return beside if os.path.isfile(beside) else None
    try:
        with open(command, "rb") as script:
            first = script.readline(1024)
    except OSError:
        return None
    line = first[2:].strip().decode(sys.getfilesystemencoding(), "replace")
    if not first.startswith(b"#!") or not os.path.isabs(line) or " " in line:
        return None
    return line


def _venv_config(folder: str) -> dict[str, str]:
    try:
        with open(os.path.join(folder, "pyvenv.cfg"), encoding="utf-8") as cfg:
            pairs = [line.split("=", 1) for line in cfg if "=" in line]
    except OSError:
        return {}
    return {key.strip().lower(): value.strip() for key, value in pairs}


def site_packages(venv: str, windows: bool = WINDOWS,
                  version: tuple[int, int] = (sys.version_info[0], sys.version_info[1])) -> str:
    """A venv's site folder: `Lib\\site-packages` on Windows, `lib/pythonX.Y/site-packages`
    elsewhere."""
    if windows:
        return os.path.join(venv, "Lib", "site-packages")
    return os.path.join(venv, "lib", f"python{version[0]}.{version[1]}", "site-packages")


def _is_site(path: str) -> bool:
    parts = os.path.normcase(os.path.abspath(path)).split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


def adopt(command: str) -> str | None:
    """Make this process import what ``command`` would: the environment's interpreter
    when it can (this process's path then holds that environment), else None."""
    interpreter = _interpreter(command)
    if interpreter is None:
        return None
    if interpreter == sys.executable:
        return interpreter  # the same interpreter, hence the same environment
    venv = os.path.dirname(os.path.dirname(interpreter))
    cfg = _venv_config(venv)
    version = cfg.get("version") or cfg.get("version_info") or ""
    base = getattr(sys, "_base_executable", "") or sys.executable
    if (not cfg or cfg.get("include-system-site-packages", "false").lower() == "true"
            or version != "{}.{}.{}".format(*sys.version_info[:3])
            or sys.implementation.name != "cpython"
            or os.path.realpath(cfg.get("home", ""))
            != os.path.dirname(os.path.realpath(base))):
        return None
    folder = site_packages(venv)
    if not os.path.isdir(folder):
        return None
    import site

    # As the venv's own interpreter would see it: $PYTHONPATH, the standard library, then
    # the venv's site folder (its .pth files processed); none of this Python's own.
    given = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = given + [p for p in sys.path if p and p not in given and not _is_site(p)]
    sys.prefix = sys.exec_prefix = venv
    site.addsitedir(folder)
    return interpreter


def run_here(command: str, args: list[str]) -> bool:
    """Run ``aide-memoire hook EVENT`` in this process when ``command``'s environment can
    be adopted (see above); False when it cannot (nothing was read from stdin)."""
    if len(args) != 1 or args[0] not in IN_PROCESS \
            or os.environ.get("AIDE_MEMOIRE_PLUGIN_EXEC"):
        return False
    interpreter = adopt(command)
    if interpreter is None:
        return False
    try:
        from aide_memoire.cli.hook import run_in
    except Exception:  # noqa: BLE001 - an older or broken package: the exec path says why
        return False
    run_in(args[0], interpreter)
    return True


def detach(command: str, args: list[str], payload: bytes) -> None:
    """Start ``command args`` in its own session with ``payload`` on its stdin, and return
    without waiting: neither Claude Code's exit nor a closed terminal ends it.

    The payload goes through an anonymous temporary file, not a pipe: a pipe holds 64 KB
    until its reader reads, so a child slow to start would hold the launcher (and Claude
    Code) on a long hook JSON. The file is the child's stdin, read from its start, and it
    goes when the child closes it: unlinked at once on POSIX, delete-on-close on Windows;
    nothing is left behind, and no other user can read it meanwhile (mode 0600)."""
    import subprocess
    import tempfile

    flags = 0
    if WINDOWS:
        flags = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    with tempfile.TemporaryFile() as handed:
        handed.write(payload)
        handed.flush()
        handed.seek(0)
        subprocess.Popen([command, *args], stdin=handed, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=not WINDOWS,
                         creationflags=flags, close_fds=True)


def hook_main(argv: list[str]) -> int:
    """aide-memoire-hook [--detach] EVENT: `aide-memoire hook EVENT` with Claude Code's hook
    JSON on stdin and the context to add on stdout. --detach (the capture events) returns at
    once and leaves the capture running: `claude -p` does not run Claude Code's own async
    hooks reliably, and a capture must never delay the person."""
    detached = bool(argv) and argv[0] == "--detach"
    args = argv[1:] if detached else argv
    try:
        command = user_command()
    except WrongBin as wrong:
        print(wrong, file=sys.stderr)
        _drain()
        return 0
    if command is None:
        if not ready():
            import subprocess

            _drain()  # the hook JSON: nothing can use it yet
            started = bootstrap("nowait", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
            if started == 0 and args[:1] == ["session-start"]:
                print(SETUP_NOTE)
            return 0
        command = str(venv_command())
    try:
        if detached:
            detach(command, ["hook", *args], _drain())
            return 0
        if run_here(command, args):
            return 0
        run(command, ["hook", *args])
    except OSError as error:  # fails open: the session goes on
        print(f"aide-memoire plugin: could not run {command}: {error}", file=sys.stderr)
    return 0


def mcp_main(argv: list[str]) -> int:
    """aide-memoire-mcp [serve options]: the stdio MCP server. The first start of a plugin
    without the user's command sets up its own environment, progress on stderr (Claude Code
    keeps it in its MCP log; stdout belongs to the protocol). The namespace comes from
    $CLAUDE_PROJECT_DIR, which `aide-memoire serve` reads."""
    try:
        command = user_command()
    except WrongBin as wrong:
        print(wrong, file=sys.stderr)
        return 127
    if command is None:
        import subprocess

        if not ready() and bootstrap("wait", stdin=subprocess.DEVNULL,
                                     stdout=sys.stderr.fileno()) != 0:
            return 127
        command = str(venv_command())
    try:
        return run(command, ["serve", *argv])
    except OSError as error:
        print(f"aide-memoire plugin: could not run {command}: {error}", file=sys.stderr)
        return 127


def _drain() -> bytes:
    try:
        return sys.stdin.buffer.read()
    except (OSError, ValueError, AttributeError):
        return b""
