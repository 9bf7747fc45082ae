"""The PostgreSQL backend's repositories, as one :class:`~..repositories.Repositories`."""

from __future__ import annotations

from ..portable.links import PortableLinks
from ..repositories import Repositories
from .entities import PostgresEntityGraph
from .memories import PostgresMemoryRows
from .review import PostgresReviewLookups

__all__ = ["postgres_repositories"]


def postgres_repositories(rows: PostgresMemoryRows | None = None) -> Repositories:
    """The repositories over a PostgresDatabase's schema; typing them as the Protocols
    makes mypy check that each class has every method a feature may call. The links'
    SQL is portable (storage/portable/links.py): one class serves both backends; the entity
    graph is SQLite's class with its two non-portable statements replaced."""
    rows = rows or PostgresMemoryRows()
    return Repositories(
        dialect="postgres", rows=rows, keywords=rows.keywords, vectors=rows.vectors,
        links=PortableLinks(), review=PostgresReviewLookups(),
        entities=PostgresEntityGraph(),
    )
