"""Hook tests: a keyword-only store in a temp home, git projects, the transcript fixtures.

The fixtures under fixtures/projects/ are Claude Code 2.1 transcripts in its JSONL
layout (user and assistant lines, tool_use / tool_result, thinking, a sidechain, a
summary, attachments, queue records, a command wrapper, an isMeta line, two malformed
lines), in two projects both named ``app``.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings

FIXTURES = Path(__file__).parent / "fixtures" / "projects"
MAIN_SESSION = "7b0e4a52-1c1d-4c55-9a51-0c3f6e2d9a01"
MAIN_TRANSCRIPT = FIXTURES / "-home-dev-work-app" / f"{MAIN_SESSION}.jsonl"
TOKEN = "ghp_Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
PASSWORD = "Tr0ub4dor&3x-staging"
PRIVATE = "12 Rue des Lilas"


@pytest.fixture(autouse=True)
def keyword_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hooks never load the model in process; neither do these tests."""
    monkeypatch.setenv("AIDE_MEMOIRE_EMBEDDING_MODEL", "none")
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("AIDE_MEMOIRE_CAPTURE", raising=False)
    monkeypatch.setenv("AIDE_MEMOIRE_HOOK_DAEMON", "false")  # no stray daemons from tests


@pytest.fixture
def settings(home: Path) -> Settings:
    return Settings(home=home, embedding_model="none")


@pytest.fixture
def kmemory(settings: Settings) -> Iterator[Memory]:
    with Memory(settings=settings) as memory:
        yield memory


def git_project(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return git_project(tmp_path / "work" / "app")


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    """A copy of the main fixture session (tests append to it)."""
    target = tmp_path / "transcripts" / MAIN_TRANSCRIPT.name
    target.parent.mkdir(parents=True)
    shutil.copy(MAIN_TRANSCRIPT, target)
    return target


def store_bytes(home: Path) -> bytes:
    """Every byte of the store's files (database, WAL, shared memory)."""
    return b"".join(p.read_bytes() for p in sorted(home.glob("memory.db*")))
