"""Rows and their indexes: the narrow storage interface retrieval and lifecycle use.

The SQL lives in the data layer's repositories (engine/storage/); ``Store`` is the name
the engine has always called them by: the memories repository, which reaches the keyword
and vector indexes so a row and its indexes change in one transaction. Every method that
writes takes the open transaction (``tx``).
"""

from __future__ import annotations

from .rows import (
    NewRow,
    RowFilter,
    StoredTurn,
    WriteHook,
    Written,
    content_hash,
    indexed,
    record_from_row,
)
from .sqlite.memories import SqliteMemoryRows, passing

__all__ = [
    "NewRow", "RowFilter", "Store", "StoredTurn", "WriteHook", "Written", "content_hash",
    "indexed", "passing", "record_from_row",
]


class Store(SqliteMemoryRows):
    """The memories repository under its historical name (SQLite is the only backend the
    engine builds today; a second one supplies its own ``MemoryRows``)."""
