"""One backend under test, SQLite or PostgreSQL, behind the same few calls.

:func:`open_backend` gives the store (its ``write()`` / ``read()`` transactions) and the
backend's :class:`Repositories`; the shared repository tests take the ``backend``
fixture (tests/postgres/conftest.py), parametrised over both, and make the same calls.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aide_memoire.engine.storage.db import SqliteDatabase
from aide_memoire.engine.storage.filter import RowFilter
from aide_memoire.engine.storage.postgres import PostgresDatabase, postgres_repositories
from aide_memoire.engine.storage.protocol import Connection
from aide_memoire.engine.storage.repositories import Repositories
from aide_memoire.engine.storage.sqlite import sqlite_repositories
from aide_memoire.engine.storage.sqlite.vectors import SqliteVectorIndex

BACKENDS = ("sqlite", "postgres")


@dataclass
class Backend:
    name: str
    db: Any  # SqliteDatabase or PostgresDatabase: both have write(), read(), close()
    repos: Repositories

    def write(self) -> contextlib.AbstractContextManager[Connection]:
        return self.db.write()  # type: ignore[no-any-return]

    def read(self) -> contextlib.AbstractContextManager[Connection]:
        return self.db.read()  # type: ignore[no-any-return]

    def passing(self, conn: Connection, rowids: Iterable[int], where: RowFilter) -> set[int]:
        return self.repos.rows.passing(conn, rowids, where)


@contextlib.contextmanager
def open_backend(name: str, *, home: Path, pg_url: str | None) -> Iterator[Backend]:
    if name == "sqlite":
        db: Any = SqliteDatabase(home / "memory.db")
        repos = sqlite_repositories(SqliteVectorIndex(vec_available=db.vec_version is not None))
    else:
        assert pg_url is not None
        db = PostgresDatabase(pg_url)
        repos = postgres_repositories()
    try:
        yield Backend(name, db, repos)
    finally:
        db.close()
