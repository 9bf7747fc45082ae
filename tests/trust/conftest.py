from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from tests.clirun import Completed, invoke


def keyword_settings(home: Path, **overrides: object) -> Settings:
    """Keyword-only settings: the trust layer needs no model, and tests stay fast."""
    return Settings(home=home, embedding_model="none", **overrides)  # type: ignore[arg-type]


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(settings=keyword_settings(tmp_path / "home")) as memory:
        yield memory


def cli(home: Path, *args: str, check: bool = True) -> Completed:
    """Run ``aide-memoire --home HOME ARGS`` keyword-only, in process (no model needed)."""
    return invoke(home, *args, check=check)


def owed(home: Path) -> int:
    """Forgets whose purge is still owed, read with plain sqlite3 as an outsider would."""
    conn = sqlite3.connect(home / "memory.db")
    try:
        return int(conn.execute("SELECT count(*) FROM purge_owed").fetchone()[0])
    finally:
        conn.close()


_READER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN")
conn.execute("SELECT count(*), max(content) FROM memories").fetchone()
print("reading", flush=True)
sys.stdin.read()
conn.execute("COMMIT")
conn.close()
"""


def start_reader(home: Path) -> subprocess.Popen[str]:
    """A reader in another process (POSIX locks do not conflict inside one process) that
    holds a read transaction on the store until its stdin is closed (``communicate``)."""
    reader = subprocess.Popen([sys.executable, "-c", _READER, str(home / "memory.db")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert reader.stdout is not None and reader.stdout.readline().strip() == "reading"
    return reader
