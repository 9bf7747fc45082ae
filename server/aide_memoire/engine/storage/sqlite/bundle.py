"""The SQLite backend's repositories, as one bundle (the composition root asks for it)."""

from __future__ import annotations

from ..portable.links import PortableLinks
from ..repositories import Repositories
from .entities import SqliteEntityGraph
from .memory_rows import SqliteMemoryRows
from .review import SqliteReviewLookups
from .vectors import SqliteVectorIndex

__all__ = ["sqlite_repositories"]


def sqlite_repositories(
    vectors: SqliteVectorIndex, rows: SqliteMemoryRows | None = None
) -> Repositories:
    """The SQLite backend's repositories; typing them as the Protocols makes mypy check
    that each implementation has every method a feature may call. ``rows`` is the
    memories repository to hand out (the engine's ``store``; built over ``vectors`` if
    not given)."""
    rows = rows or SqliteMemoryRows(vectors)
    return Repositories(
        dialect="sqlite", rows=rows, keywords=rows.keywords, vectors=vectors,
        links=PortableLinks(), review=SqliteReviewLookups(),
        entities=SqliteEntityGraph(),
    )
