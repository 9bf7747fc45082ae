"""The SQLite implementations of the data layer's repositories (FTS5, sqlite-vec)."""

from __future__ import annotations

from ..repositories import Repositories
from .links import SqliteLinks
from .memories import SqliteMemoryRows
from .vectors import SqliteVectorIndex

__all__ = ["sqlite_repositories"]


def sqlite_repositories(vectors: SqliteVectorIndex) -> Repositories:
    """The SQLite backend's repositories; typing them as the Protocols makes mypy check
    that each implementation has every method a feature may call."""
    rows = SqliteMemoryRows(vectors)
    return Repositories(
        dialect="sqlite", rows=rows, keywords=rows.keywords, vectors=vectors,
        links=SqliteLinks(),
    )
