"""The row types the engine writes and reads memories with.

The memories repository itself is the :class:`~.repositories.MemoryRows` Protocol, one
implementation per backend (storage/sqlite/memory_rows.py, storage/postgres/memories.py,
both over storage/portable/memories.py). Every method that writes takes the open
transaction (``tx``).
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

__all__ = [
    "NewRow", "RowFilter", "StoredTurn", "WriteHook", "Written", "content_hash", "indexed",
    "record_from_row",
]
