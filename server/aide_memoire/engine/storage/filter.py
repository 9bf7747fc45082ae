"""The filter shared by listing and recall, as every backend receives it.

A module of its own so that the rows module and each backend's renderer of it (SQLite's
in storage/sqlite/filters.py) can both import it without importing each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["RowFilter"]


@dataclass
class RowFilter:
    """Filters shared by listing and recall; a backend renders it in its own dialect."""

    namespaces: Sequence[str]
    kinds: Sequence[str] | None = None
    tags: Sequence[str] | None = None
    min_importance: float | None = None
    since: datetime | None = None
    until: datetime | None = None
    statuses: Sequence[str] = ("active",)
    as_of: datetime | None = None
    # Exact matches on the fields core/fields.py declares filter="equals", by column.
    equals: dict[str, Any] = field(default_factory=dict)
