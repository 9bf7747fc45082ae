"""The entity graph on PostgreSQL (the bundle's ``entities``): the portable class with the
two statements that are not portable rendered for this server.

- The filter of ``mentioning``: lists as ``= ANY(?)`` arrays (filters.py).
- The name range of ``named_like``: ``name > prefix AND name < prefix || U+FFFF`` finds
  the names that start with ``prefix`` only in byte order, SQLite's. A database created
  with a language collation (``en_US.UTF-8``: punctuation ignored at first, U+FFFF
  weighed as it likes) would find others, or none; ``COLLATE "C"`` compares as SQLite
  does whatever the database's default is.
"""

from __future__ import annotations

from typing import Any

from ..filter import RowFilter
from ..portable.entities import PortableEntityGraph
from .filters import where_pg

__all__ = ["PostgresEntityGraph"]


class PostgresEntityGraph(PortableEntityGraph):
    """``entities``, ``memory_entities`` and ``entity_edges`` on PostgreSQL."""

    _name = 'name COLLATE "C"'

    @staticmethod
    def _where(where: RowFilter) -> tuple[str, list[Any]]:
        return where_pg(where, "m")
