"""The PostgreSQL store as the parts open_context builds the engine from.

The engine's parts are typed by SQLite's classes (``Database``, ``Store``,
``VectorTables``); :class:`PostgresStore` is the PostgreSQL memories repository under
``Store`` (its own methods come first in the MRO), the vector index is a
``VectorTables`` already (vector_index.py), and :func:`open_postgres` opens them.
"""

from __future__ import annotations

from typing import cast

from ...core.errors import InvalidInput
from ...core.settings import Settings
from ..db import Database
from ..store import Store
from ..vectors import VectorTables
from .engine_db import EngineDatabase
from .memories import PostgresMemoryRows
from .vector_index import PostgresVectorIndex

__all__ = ["PostgresStore", "open_postgres"]


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
    tables = PostgresVectorIndex()
    # EngineDatabase has every member of Database the engine's parts read (engine_db.py).
    return cast(Database, db), tables, PostgresStore(vectors=tables)
