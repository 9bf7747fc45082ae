from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire.engine.code.index import CodeIndex
from aide_memoire.engine.storage.db import SqliteDatabase


def open_index(folder: Path) -> CodeIndex:
    """The code index over a real store file (no Memory: it need not load any model)."""
    return CodeIndex(SqliteDatabase(folder / "memory.db"))


@pytest.fixture
def code(tmp_path: Path) -> Iterator[CodeIndex]:
    index = open_index(tmp_path / "home")
    yield index
    index.db.close()
