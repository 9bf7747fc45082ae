"""The PostgreSQL store as the parts open_context builds the engine from.

The engine's parts are typed by SQLite's classes (``Database``, ``Store``,
``VectorTables``); :class:`PostgresStore` and :class:`PostgresTables` are the PostgreSQL
repositories under those types (their own methods come first in the MRO, so no SQLite
SQL of a Protocol method runs), and :func:`open_postgres` opens them from the settings.
"""

from __future__ import annotations

from typing import cast

from ...db import Database
from ...errors import InvalidInput
from ...settings import Settings
from ...store import Store
from ...vectors import VectorTables
from .engine_db import EngineDatabase
from .memories import PostgresMemoryRows
from .vector_index import PostgresVectorIndex

__all__ = ["PostgresStore", "PostgresTables", "open_postgres"]


class PostgresTables(PostgresVectorIndex, VectorTables):
    """pgvector's tables where the engine expects its vector tables."""

    def __init__(self) -> None:
        super().__init__(vec_available=True)


class PostgresStore(PostgresMemoryRows, Store):
    """The PostgreSQL memories repository where the engine expects its ``Store``."""


def open_postgres(settings: Settings) -> tuple[Database, VectorTables, Store]:
    """The store ``settings.database_url`` names, its vector tables and memories."""
    assert settings.database_url is not None
    url = settings.database_url.get_secret_value()
    if not url.startswith(("postgresql://", "postgres://")):
        scheme = url.split("://")[0] if "://" in url else "(no scheme)"
        raise InvalidInput(
            f"AIDE_MEMOIRE_DATABASE_URL must be a postgresql:// URL, not {scheme}://..."
        )
    db = EngineDatabase(url, settings.home, lock_timeout_ms=settings.busy_timeout_ms)
    tables = PostgresTables()
    # EngineDatabase has every member of Database the engine's parts read (engine_db.py).
    return cast(Database, db), tables, PostgresStore(vectors=tables)
