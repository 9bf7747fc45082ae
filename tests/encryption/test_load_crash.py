"""The SIGKILL-under-load test of tests/ops/test_crash.py, on an encrypted store: writers
killed at random points lose no acknowledged write and leave a sound store (SQLCipher's
WAL is SQLite's, page by page encrypted)."""

from __future__ import annotations

import os

from aide_memoire import Memory
from aide_memoire.engine.ops import encrypt as ops
from aide_memoire.engine.storage.driver import is_encrypted

from ..ops.killed_writers import kill_writers_at_random
from .conftest import Keyed


def _opened_with_sqlcipher(memory: Memory) -> None:
    assert memory.status().db_driver == "sqlcipher3"


def test_sigkill_under_load_on_an_encrypted_store_loses_no_acknowledged_write(
        keyed: Keyed) -> None:
    keyed.memory().close()
    ops.encrypt(keyed.settings(), actor="test")
    kill_writers_at_random(keyed.home, {**os.environ, **keyed.env}, 2929, keyed.memory,
                           check=_opened_with_sqlcipher)
    assert is_encrypted(keyed.home / "memory.db")
