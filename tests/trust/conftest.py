from __future__ import annotations

import secrets
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


def rare_word(prefix: str) -> str:
    """A random word the keyword index stores exactly as written, so a test can look for
    its bytes in the file: it ends in "x", which no stemming rule strips (a hex tail ending
    in "e" lost it to the stemmer, and then only the already-scrubbed row held the whole
    word: 1 run in 16 failed a "still in the file" check)."""
    return prefix + secrets.token_hex(6) + "x"


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
    _readers.append(reader)
    assert reader.stdout is not None and reader.stdout.readline().strip() == "reading"
    return reader


_readers: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _no_reader_left() -> Iterator[None]:
    """A test that fails while its reader holds the store stops the reader, so the
    process does not outlive the test and fail a later one with a ResourceWarning."""
    yield
    while _readers:
        reader = _readers.pop()
        if reader.poll() is None:
            reader.kill()
        reader.communicate()
