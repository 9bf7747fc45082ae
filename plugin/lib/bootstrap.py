"""First-use setup of the plugin's own aide-memoire environment (standard library only).

Run by plugin/lib/launch.py when neither the user's `aide-memoire` nor a finished plugin
environment exists:

    bootstrap.py wait|nowait --data DIR --pkg DIR --key KEY --extras EXTRAS --torch SPEC

The install itself runs in a detached worker process that holds an exclusive lock on
DIR/setup.lock for its whole life, so that two hooks and a server starting at once run
one install, and a caller that is killed (a hook timeout, an MCP connect timeout) does
not kill the install: the next start finds it finished. `wait` follows the worker's log
on stderr until it ends (the MCP server needs the command); `nowait` returns at once.
The worker writes DIR/venv/.aide-memoire-stamp (the key) last, so a half-built
environment is never used; an unstamped one is rebuilt from scratch.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

STAMP = ".aide-memoire-stamp"
WINDOWS = os.name == "nt"
# Bounds the wait of a caller (not the install): after it the caller fails with a message
# and the worker carries on.
WAIT_SECONDS = float(os.environ.get("AIDE_MEMOIRE_SETUP_WAIT", "1800"))
# Windows: how long a worker tries for the lock its starter released, and how long a
# caller waits before reading a free lock as "the worker ended".
HANDOVER_S = 10.0


def _paths(data: Path) -> dict[str, Path]:
    return {"venv": data / "venv", "lock": data / "setup.lock", "log": data / "setup.log",
            "failed": data / "setup.failed", "src": data / "src"}


def venv_file(venv: Path, name: str, windows: bool = WINDOWS) -> Path:
    """A program of the venv: `Scripts\\<name>.exe` on Windows, `bin/<name>` elsewhere
    (plugin/lib/launch.py's venv_command names the same)."""
    return venv / "Scripts" / f"{name}.exe" if windows else venv / "bin" / name


def _ready(data: Path, key: str) -> bool:
    venv = _paths(data)["venv"]
    try:
        return venv_file(venv, "aide-memoire").exists() and \
            (venv / STAMP).read_text().strip() == key
    except OSError:
        return False


def _lock(fd: int) -> bool:
    """Take the exclusive lock on ``fd`` without waiting; False when another holds it."""
    try:
        if WINDOWS:
            import msvcrt

            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # BlockingIOError (POSIX), PermissionError (Windows)
        return False
    return True


def _try_lock(path: Path) -> int | None:
    """An fd holding the exclusive setup lock, or None when a worker holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    if not _lock(fd):
        os.close(fd)
        return None
    return fd


def _wait_lock(path: Path, seconds: float) -> int | None:
    """``_try_lock`` retried for ``seconds`` (a caller probing the lock holds it for an
    instant)."""
    deadline = time.monotonic() + seconds
    while True:
        fd = _try_lock(path)
        if fd is not None or time.monotonic() > deadline:
            return fd
        time.sleep(0.2)


def _detached() -> dict[str, object]:
    """Popen options for a process that outlives its starter, on either OS."""
    if WINDOWS:
        return {"creationflags": subprocess.DETACHED_PROCESS  # type: ignore[attr-defined]
                | subprocess.CREATE_NEW_PROCESS_GROUP}  # type: ignore[attr-defined]
    return {"start_new_session": True}


def _spawn_worker(args: argparse.Namespace, lock_fd: int) -> None:
    # POSIX: the worker inherits the locked file description, so the lock passes to it
    # with no gap in which a second caller could start another install. Windows cannot
    # hand a descriptor over: the worker takes the lock itself (--lock), and of two
    # workers started at once the second finds it held and leaves.
    log = open(_paths(args.data)["log"], "w", encoding="utf-8")  # noqa: SIM115 - child owns it
    handover = (["--lock"] if WINDOWS else ["--lock-fd", str(lock_fd)])
    subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "install", "--data", str(args.data),
         "--pkg", str(args.pkg), "--key", args.key, "--extras", args.extras,
         "--torch", args.torch, "--torch-index", args.torch_index, *handover],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        pass_fds=() if WINDOWS else (lock_fd,), close_fds=True, **_detached())  # type: ignore[call-overload]
    log.close()


def _start(args: argparse.Namespace) -> bool:
    """Start a worker unless one runs; True when this call started it."""
    paths = _paths(args.data)
    args.data.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = _try_lock(paths["lock"])
    if fd is None:
        return False
    try:
        if _ready(args.data, args.key):
            return False
        paths["failed"].unlink(missing_ok=True)
        if WINDOWS:  # released first: the worker takes it (see _spawn_worker)
            os.close(fd)
            fd = -1
        _spawn_worker(args, fd)
        return True
    finally:
        if fd >= 0:
            os.close(fd)


def _follow(args: argparse.Namespace) -> int:
    """Copy the worker's log to stderr until the environment is ready or the worker ends."""
    paths = _paths(args.data)
    begun = time.monotonic()
    deadline = begun + WAIT_SECONDS
    offset = 0
    while True:
        try:
            with open(paths["log"], encoding="utf-8", errors="replace") as log:
                log.seek(offset)
                chunk = log.read()
                offset = log.tell()
        except OSError:
            chunk = ""
        if chunk:
            sys.stderr.write(chunk)
            sys.stderr.flush()
        if _ready(args.data, args.key):
            return 0
        handing_over = WINDOWS and time.monotonic() - begun < 2 * HANDOVER_S
        fd = None if handing_over else _try_lock(paths["lock"])
        if fd is not None:  # no worker holds the lock: it ended without a stamp
            os.close(fd)
            if _ready(args.data, args.key):
                return 0
            reason = paths["failed"].read_text() if paths["failed"].exists() else "it stopped"
            sys.stderr.write(f"aide-memoire plugin: setting up the environment failed: "
                             f"{reason.strip()}\nFull log: {paths['log']}. It is tried "
                             "again on the next start.\n")
            return 1
        if time.monotonic() > deadline:
            sys.stderr.write(f"aide-memoire plugin: the setup is still running after "
                             f"{WAIT_SECONDS:.0f} s; see {paths['log']}.\n")
            return 1
        time.sleep(0.5)


def _step(number: int, total: int, text: str) -> None:
    print(f"aide-memoire setup [{number}/{total}] {text}", flush=True)


def _run(command: list[str]) -> None:
    print("$ " + " ".join(command), flush=True)
    subprocess.run(command, check=True, stdin=subprocess.DEVNULL)


def _install(args: argparse.Namespace) -> int:
    paths = _paths(args.data)
    venv, src = paths["venv"], paths["src"]
    extras = [e.strip() for e in args.extras.split(",") if e.strip() not in ("", "none")]
    wants_torch = bool({"all", "embeddings"} & set(extras))
    total = 4 if wants_torch else 3
    started = time.monotonic()
    lock_fd = args.lock_fd
    if args.lock:  # Windows: take the lock here (see _spawn_worker)
        lock_fd = _wait_lock(paths["lock"], HANDOVER_S)
        if lock_fd is None or _ready(args.data, args.key):
            return 0  # another worker holds it, or has just finished the work
    if lock_fd is not None:  # who holds the lock: the pid of this worker (and group)
        # After the first byte, which Windows locks (a locked range cannot be written).
        os.ftruncate(lock_fd, 1)
        os.lseek(lock_fd, 1, os.SEEK_SET)
        os.write(lock_fd, f"{os.getpid()}\n".encode())
    try:
        print(f"aide-memoire plugin: first-use setup of its own environment in {venv} "
              f"({args.key}); this happens once.", flush=True)
        _step(1, total, f"creating the environment with {sys.executable}")
        shutil.rmtree(venv, ignore_errors=True)  # unstamped: partial or another version
        _run([sys.executable, "-m", "venv", str(venv)])
        pip = [str(venv_file(venv, "python")), "-m", "pip", "install", "--progress-bar", "off",
               "--disable-pip-version-check"]
        # A copy with the symlinks of a checkout resolved, so the build writes nothing
        # into the plugin folder.
        _step(2, total, f"copying the package source from {args.pkg}")
        shutil.rmtree(src, ignore_errors=True)
        shutil.copytree(args.pkg, src, symlinks=False, ignore=shutil.ignore_patterns(
            "__pycache__", "*.egg-info", "build", "*.pyc"))
        number = 3
        if wants_torch:
            _step(number, total, f"installing {args.torch} (CPU build; the largest step)")
            index = ["--index-url", args.torch_index] if args.torch_index else []
            _run([*pip, *index, args.torch])
            number += 1
        target = f"{src}[{','.join(extras)}]" if extras else str(src)
        _step(number, total, f"installing aide-memoire ({args.extras or 'no extras'})")
        constraint = [args.torch] if wants_torch else []
        _run([*pip, target, *constraint])
        (venv / STAMP).write_text(args.key + "\n")
        shutil.rmtree(src, ignore_errors=True)
        print(f"aide-memoire plugin: environment ready in {time.monotonic() - started:.0f} s.",
              flush=True)
        return 0
    except (OSError, subprocess.CalledProcessError) as error:
        paths["failed"].write_text(f"{error}\n")
        print(f"aide-memoire plugin: setup failed: {error}", flush=True)
        return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bootstrap.py")
    parser.add_argument("mode", choices=["wait", "nowait", "install"])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--pkg", type=Path, required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--extras", default="all")
    parser.add_argument("--torch", default="torch==2.13.0")
    parser.add_argument("--torch-index", default="")
    parser.add_argument("--lock-fd", type=int)
    parser.add_argument("--lock", action="store_true")
    args = parser.parse_args(argv)
    if args.mode == "install":
        return _install(args)
    if _ready(args.data, args.key):
        return 0
    _start(args)
    if args.mode == "nowait":
        return 0
    return _follow(args)


if __name__ == "__main__":
    sys.exit(main())
