"""Walking a source tree: which files to index and which to leave out, with a reason.

Honours ``.gitignore`` files at every level (and ``.git/info/exclude``) with git's own
rules via pathspec, where a deeper file overrides a shallower one. Symlinks are never
followed (git does not follow them either), which also makes symlink loops harmless.
Vendored and tool folders are skipped by name; binary, generated, minified and
oversized files are skipped and reported.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

__all__ = ["MAX_FILE_BYTES", "Candidate", "Skip", "walk"]

MAX_FILE_BYTES = 2 * 1024 * 1024

def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Folders that hold someone else's code, tool state or build output.
SKIP_DIRS = _names(
    """
    .git .hg .svn .bzr node_modules bower_components vendor third_party .venv venv
    __pycache__ .mypy_cache .pytest_cache .ruff_cache .tox .nox .eggs site-packages
    dist-packages build dist target .gradle .idea .vscode .next .nuxt .cache coverage
    htmlcov .terraform
    """
)
SKIP_SUFFIXES = (".egg-info", ".dist-info")

# Known binary formats, skipped without reading.
BINARY_EXTENSIONS = _names(
    """
    .png .jpg .jpeg .gif .bmp .ico .webp .tiff .psd .pdf .zip .gz .tgz .bz2 .xz .zst .7z
    .rar .tar .jar .war .whl .egg .so .dylib .dll .exe .o .a .lib .obj .class .pyc .pyo
    .pyd .wasm .bin .dat .db .sqlite .sqlite3 .mp3 .mp4 .wav .ogg .flac .avi .mov .mkv
    .ttf .otf .woff .woff2 .eot .npy .npz .pkl .pickle .pt .onnx .parquet .icns
    """
)
GENERATED_NAMES = _names(
    """
    package-lock.json yarn.lock pnpm-lock.yaml Cargo.lock poetry.lock uv.lock
    Pipfile.lock composer.lock go.sum Gemfile.lock
    """
)
GENERATED_SUFFIXES = (".min.js", ".min.css", ".map", "_pb2.py", "_pb2_grpc.py", ".pb.go")


@dataclass(frozen=True)
class Candidate:
    """A file to consider: its path relative to the root and what stat said."""

    rel: str
    path: Path
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Skip:
    rel: str
    reason: str


class _Ignores:
    """The .gitignore specs in force for one folder, shallowest first."""

    def __init__(self, specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()) -> None:
        self.specs = specs

    def child(self, folder: Path, rel: str) -> _Ignores:
        lines: list[str] = []
        for name in (".gitignore",) if rel else (".gitignore", ".git/info/exclude"):
            try:
                lines += (folder / name).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
        if not lines:
            return self
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        return _Ignores((*self.specs, (rel, spec)))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        verdict: bool | None = None
        for base, spec in self.specs:
            sub = rel[len(base) + 1 :] if base else rel
            result = spec.check_file(sub + "/" if is_dir else sub)
            if result.include is not None:
                verdict = bool(result.include)
        return bool(verdict)


def _skip_file(name: str, size: int, max_bytes: int) -> str | None:
    lower = name.lower()
    if size > max_bytes:
        return f"oversized ({size} bytes > limit {max_bytes})"
    if os.path.splitext(lower)[1] in BINARY_EXTENSIONS:
        return "binary (by extension)"
    if name in GENERATED_NAMES or lower.endswith(GENERATED_SUFFIXES):
        return "generated (lock file, minified or compiled output)"
    return None


def walk(
    root: Path,
    *,
    max_bytes: int = MAX_FILE_BYTES,
    secret_files: pathspec.GitIgnoreSpec | None = None,
) -> Iterator[Candidate | Skip]:
    """Yield every file worth reading under ``root`` and every skip with its reason.

    ``secret_files`` names credential files (see bounds.py): skipped without reading.
    """
    stack: list[tuple[Path, str, _Ignores]] = [(root, "", _Ignores().child(root, ""))]
    while stack:
        folder, rel_dir, ignores = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            yield Skip(rel_dir or ".", f"cannot list folder: {exc.strerror or exc}")
            continue
        subdirs: list[tuple[Path, str, _Ignores]] = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                yield Skip(rel, f"cannot stat: {exc.strerror or exc}")
                continue
            is_dir = stat.S_ISDIR(info.st_mode)
            if ignores.ignored(rel, is_dir):
                continue
            if stat.S_ISLNK(info.st_mode):
                yield Skip(rel, "symlink (not followed)")
                continue
            if is_dir:
                if entry.name in SKIP_DIRS or entry.name.endswith(SKIP_SUFFIXES):
                    continue
                path = Path(entry.path)
                subdirs.append((path, rel, ignores.child(path, rel)))
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            if secret_files is not None and secret_files.match_file(rel):
                yield Skip(rel, "secret file by name (not read; see the code_secret_files setting)")
                continue
            reason = _skip_file(entry.name, info.st_size, max_bytes)
            if reason:
                yield Skip(rel, reason)
                continue
            yield Candidate(rel, Path(entry.path), info.st_size, info.st_mtime_ns)
        stack.extend(reversed(subdirs))
