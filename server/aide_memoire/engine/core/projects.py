"""Project identity: the one function that maps a directory to its memory namespace.

A project is the git repository a directory lies in (its top folder), else the directory
itself. Its namespace keeps the folder name readable and adds a short, stable hash of the
root's absolute path, so two checkouts both called ``app`` get different memories
(``project:app-3f2a9c`` and ``project:app-81d0e4``) and every session in one checkout gets
the same one. A linked git worktree belongs to its main checkout (same repository, same
memory). Moving or renaming the folder gives a new namespace: ``aide-memoire project
adopt`` brings the old memories along (docs/hooks.md).

Namespaces of earlier versions were ``project:<folder>`` with no hash (``legacy``).
Stdlib only: the prompt hook imports this before anything heavy.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from .validate import NAMESPACE_MAX, normalize_namespace

__all__ = ["Project", "directory_from", "project_for", "project_namespace", "project_root"]

PREFIX = "project:"
HASH_CHARS = 6


class Project(NamedTuple):
    """Where a directory's memory lives, and why."""

    root: Path
    namespace: str
    legacy: str  # the namespace earlier versions used: project:<folder>, no hash
    git: bool


def _git_marker(folder: Path) -> Path | None:
    marker = folder / ".git"
    try:
        return marker if marker.exists() else None
    except OSError:
        return None


def _main_checkout(marker: Path) -> Path:
    """The main checkout of a linked worktree (``.git`` is a file naming its gitdir)."""
    try:
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return marker.parent
    if not text.startswith("gitdir:"):
        return marker.parent
    gitdir = Path(text.removeprefix("gitdir:").strip())
    if not gitdir.is_absolute():
        gitdir = (marker.parent / gitdir).resolve()
    # <repo>/.git/worktrees/<name>: its commondir file points back at <repo>/.git.
    common = gitdir / "commondir"
    try:
        common_dir = (gitdir / common.read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        return marker.parent  # a submodule's gitdir, or unreadable: the folder is the project
    return common_dir.parent if common_dir.name == ".git" else marker.parent


def project_root(directory: str | os.PathLike[str]) -> tuple[Path, bool]:
    """The project root of ``directory`` and whether it is a git checkout."""
    start = Path(os.path.abspath(directory))
    for folder in (start, *start.parents):
        marker = _git_marker(folder)
        if marker is None:
            continue
        if marker.is_file():
            return _main_checkout(marker), True
        return folder, True
    return start, False


def project_namespace(directory: str | os.PathLike[str]) -> str:
    """``project:<folder>-<hash of the root path>`` for the project holding ``directory``."""
    return project_for(directory).namespace


def project_for(directory: str | os.PathLike[str]) -> Project:
    root, git = project_root(directory)
    name = root.name or "root"
    digest = hashlib.sha256(os.fsencode(str(root))).hexdigest()[:HASH_CHARS]
    readable = normalize_namespace(name, prefix=PREFIX)
    room = NAMESPACE_MAX - HASH_CHARS - 1
    namespace = normalize_namespace(f"{readable[:room]}-{digest}")
    return Project(root=root, namespace=namespace, legacy=readable, git=git)


def directory_from(environ: Mapping[str, str], cwd: str | os.PathLike[str] | None) -> Path:
    """The client's project directory: ``CLAUDE_PROJECT_DIR``, else ``cwd``, else ours."""
    given = environ.get("CLAUDE_PROJECT_DIR") or (os.fspath(cwd) if cwd else "") or os.getcwd()
    return Path(given)
