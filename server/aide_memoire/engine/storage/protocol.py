"""What the engine needs of a database connection, typed.

Every engine function that takes a connection or an open transaction takes a
:class:`Connection`. SQLite's DB-API connection (whichever driver ``driver.py`` picked)
satisfies it as it is; a second backend supplies an adapter with the same methods, so
features never see which database they run on. ``dialect`` tells the few repositories
that must write backend-specific SQL (keyword index, vectors, schema) which one to use.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal, Protocol

__all__ = ["Connection", "Cursor", "Dialect", "Params", "Row"]

Dialect = Literal["sqlite", "postgres"]
Row = tuple[Any, ...]
Params = Sequence[Any] | dict[str, Any]


class Cursor(Protocol):
    """The result of one statement."""

    @property
    def rowcount(self) -> int: ...

    @property
    def lastrowid(self) -> int | None: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int = ...) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """An open connection or transaction: statements with ``?`` placeholders."""

    def execute(self, sql: str, parameters: Params = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Params], /) -> Cursor: ...
