"""Per-session hook state in the data home: capture cursors and what was injected.

Small JSON files per Claude Code session under ``<home>/hooks/sessions/``, named by a
hash of the session id (no path is ever built from input). Each change happens under an
exclusive lock on the file's lock, so a Stop capture and a SessionEnd capture running at
once, or two prompt hooks, never lose each other's updates.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

__all__ = ["SessionState", "capture_lock", "expire_states", "session_state"]

STATE_DIR = ("hooks", "sessions")
EXPIRE_DAYS = 30.0
MAX_INJECTED = 2000

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; a lost update only repeats a memory
    fcntl = None  # type: ignore[assignment]


class SessionState:
    """The state of one session, loaded under the lock; ``save`` writes it back."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data

    def cursor(self, transcript: str) -> int:
        value = self.data.get("cursors", {}).get(_key(transcript), 0)
        return value if isinstance(value, int) and value >= 0 else 0

    def set_cursor(self, transcript: str, offset: int) -> None:
        self.data.setdefault("cursors", {})[_key(transcript)] = int(offset)

    def injected(self) -> set[str]:
        return {str(i) for i in self.data.get("injected", [])}

    def add_injected(self, ids: list[str]) -> None:
        current = [str(i) for i in self.data.get("injected", [])]
        current += [i for i in ids if i not in current]
        self.data["injected"] = current[-MAX_INJECTED:]

    def save(self) -> None:
        self.data["updated"] = time.time()
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(self.data, fh)
        os.replace(tmp, self.path)


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _folder(home: Path) -> Path:
    folder = home.joinpath(*STATE_DIR)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


Part = Literal["capture", "inject"]


@contextlib.contextmanager
def session_state(home: Path, session_id: str, part: Part) -> Iterator[SessionState]:
    """Load, lock and yield one part of a session's state (``save`` keeps changes).

    Capture cursors and the injected list are separate files with separate locks: a long
    capture must never make the next prompt's hook wait.
    """
    folder = _folder(home)
    stem = f"{_key(session_id)}.{part}"
    path = folder / f"{stem}.json"
    lock_fd = os.open(folder / f"{stem}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        yield SessionState(path, data if isinstance(data, dict) else {})
    finally:
        os.close(lock_fd)  # closing releases the lock


def expire_states(home: Path, *, days: float = EXPIRE_DAYS) -> int:
    """Delete state files of sessions untouched for ``days``; returns how many."""
    cutoff = time.time() - days * 86400
    removed = 0
    for path in _folder(home).iterdir():
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
    return removed


@contextlib.contextmanager
def capture_lock(home: Path, namespace: str) -> Iterator[None]:
    """Serialise captures into one namespace (live hooks and a backfill alike): the check
    "is this line stored already?" and the write then see each other, so two captures of
    the same lines (a session and its resumed copy) cannot both add them."""
    folder = _folder(home)
    lock_fd = os.open(folder / f"capture-{_key(namespace)}.lock", os.O_RDWR | os.O_CREAT,
                      0o600)
    try:
        if fcntl is not None:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(lock_fd)
