"""The PostgreSQL store as the parts open_context builds the engine from.

:func:`open_postgres` opens the store ``settings.database_url`` names: the engine's
:class:`~..protocol.Database` (engine_db.py) and its memories repository, which holds
the keyword and vector indexes (memories.py).
"""

from __future__ import annotations

from ...core.errors import InvalidInput
from ...core.settings import Settings
from .engine_db import EngineDatabase
from .memories import PostgresMemoryRows
from .vector_index import PostgresVectorIndex

__all__ = ["open_postgres"]


def open_postgres(settings: Settings) -> tuple[EngineDatabase, PostgresMemoryRows]:
    """The store ``settings.database_url`` names and its memories repository."""
    assert settings.database_url is not None
    url = settings.database_url.get_secret_value()
    if not url.startswith(("postgresql://", "postgres://")):
        scheme = url.split("://")[0] if "://" in url else "(no scheme)"
        raise InvalidInput(
            f"AIDE_MEMOIRE_DATABASE_URL must be a postgresql:// URL, not {scheme}://..."
        )
    db = EngineDatabase(url, settings.home, lock_timeout_ms=settings.busy_timeout_ms)
    return db, PostgresMemoryRows(vectors=PostgresVectorIndex())
