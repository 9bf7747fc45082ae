"""The SQLite implementations of the data layer's repositories (FTS5, sqlite-vec).

``sqlite_repositories`` loads on first use (PEP 562): the prompt hook's keyword lookup
(``lookup.py``) lives in this package and must not pay for the repositories' imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .bundle import sqlite_repositories

__all__ = ["sqlite_repositories"]


def __getattr__(name: str) -> Any:
    if name != "sqlite_repositories":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .bundle import sqlite_repositories

    return sqlite_repositories
