"""The PostgreSQL backend's repositories, as one :class:`~..repositories.Repositories`."""

from __future__ import annotations

from ..repositories import Repositories
from .links import PostgresLinks
from .memories import PostgresMemoryRows

__all__ = ["postgres_repositories"]


def postgres_repositories(rows: PostgresMemoryRows | None = None) -> Repositories:
    """The repositories over a PostgresDatabase's schema; typing them as the Protocols
    makes mypy check that each class has every method a feature may call."""
    rows = rows or PostgresMemoryRows()
    return Repositories(
        dialect="postgres", rows=rows, keywords=rows.keywords, vectors=rows.vectors,
        links=PostgresLinks(),
    )
