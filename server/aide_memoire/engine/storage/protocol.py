"""What the engine needs of a store and its connections, typed.

Every engine function that takes a connection or an open transaction takes a
:class:`Connection`. SQLite's DB-API connection (whichever driver ``driver.py`` picked)
satisfies it as it is; a second backend supplies an adapter with the same methods, so
features never see which database they run on. The store itself is a :class:`Database`:
transactions, commit hooks, and what each backend really has to say about itself
(:meth:`Database.describe` for status, :meth:`Database.purge_deleted` for forget).
``dialect`` tells the few repositories that must write backend-specific SQL (keyword
index, vectors, schema) which one to use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

__all__ = [
    "Connection", "Cursor", "Database", "Dialect", "Params", "Row", "StoreInfo", "VectorSupport",
]

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


@dataclass(frozen=True)
class VectorSupport:
    """Whether this store can hold and read dense vectors here, and with what."""

    name: str  # the extension: sqlite-vec, pgvector
    version: str | None  # None: not loaded, the store is keyword-only here
    error: str | None = None  # why not, when it is not

    @property
    def available(self) -> bool:
        return self.version is not None


@dataclass(frozen=True)
class StoreInfo:
    """What a store says about itself for ``status`` (never a password)."""

    location: str  # the file, or the server, database and schema
    size_bytes: int  # the file, or the store's tables on the server
    schema_version: int
    driver: str  # the Python driver, with its version
    engine: str  # the engine's version (a server's with its name: "PostgreSQL 16.4")
    journal: str  # SQLite's journal mode; "server" for a server's own WAL


Hook = Callable[[Connection], object]


class Database(Protocol):
    """A store: transactions on this thread's connection, hooks around commits, and what
    it really is (:meth:`describe`). Driver errors leave :meth:`read` and :meth:`write` as
    the project's errors (engine/core/errors.py), mapped by error code."""

    dialect: Dialect
    created: bool  # this process made the store (a new, empty one)
    busy_timeout_ms: int
    commit_hooks: list[Hook]  # called with the connection after each commit

    @property
    def closed(self) -> bool: ...

    @property
    def local_state(self) -> Path:
        """The file this machine's own state for the store sits beside (the audit anchor
        and its key): the SQLite file, or for a server store the pointer file in the data
        home that names it."""
        ...

    def conn(self) -> Connection: ...

    def read(self) -> AbstractContextManager[Connection]: ...

    def write(self) -> AbstractContextManager[Connection]: ...

    def in_transaction(self) -> bool: ...

    def schema_version(self) -> int: ...

    def vector_support(self) -> VectorSupport: ...

    def describe(self) -> StoreInfo: ...

    def purge_deleted(self, *, wait_ms: int) -> bool:
        """Leave no deleted text recoverable from the store's files (forget): SQLite
        checkpoints and truncates its WAL, PostgreSQL vacuums the tables that held it.
        False when it could not be done now (it is owed, retried after a later commit)."""
        ...

    def close(self) -> None: ...
