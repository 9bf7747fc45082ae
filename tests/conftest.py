from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import Memory


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    with Memory(home) as m:
        yield m


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
