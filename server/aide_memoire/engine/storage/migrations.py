"""Numbered, recorded schema steps: the one history both backends follow.

SQLite's steps are storage/sqlite_steps.py, PostgreSQL's storage/postgres/schema.py; a
version means the same tables on both. Each step runs inside the migrating transaction;
``PRAGMA user_version`` and the ``schema_migrations`` table both record the last step
applied (PostgreSQL: ``schema_migrations``). Append only: never edit a step that has
shipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .sqlite_steps import FTS_TOKENIZE, STEPS

__all__ = ["APPLICATION_ID", "FTS_COLUMNS", "FTS_TOKENIZE", "MIGRATIONS", "SCHEMA_VERSION",
           "Migration"]

# 'AIME' as a 32-bit big-endian integer: marks the file as ours (PRAGMA application_id).
APPLICATION_ID = 0x41494D45

# FTS5 columns, in order. bm25() weights in retrieval follow this order.
FTS_COLUMNS = ("content", "speaker", "context", "after", "window", "tags", "dates")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    apply: Callable[[Any], None]


MIGRATIONS: tuple[Migration, ...] = tuple(
    Migration(version, name, apply) for version, name, apply in STEPS)

SCHEMA_VERSION = MIGRATIONS[-1].version
