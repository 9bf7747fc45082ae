"""The entity graph on SQLite: the portable statements, with SQLite's row filter."""

from __future__ import annotations

from typing import Any

from ..filter import RowFilter
from ..portable.entities import PortableEntityGraph
from .filters import where_sql

__all__ = ["SqliteEntityGraph"]


class SqliteEntityGraph(PortableEntityGraph):
    """``entities``, ``memory_entities`` and ``entity_edges`` (the bundle's ``entities``)."""

    @staticmethod
    def _where(where: RowFilter) -> tuple[str, list[Any]]:
        return where_sql(where, "m")
