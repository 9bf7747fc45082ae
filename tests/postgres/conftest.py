"""A real PostgreSQL with pgvector for the backend's tests, from the pgserver wheel.

One server for the session, in a fresh temporary data directory (no system service,
nothing listening on TCP: a Unix socket in that directory), stopped and deleted at the
end; the ``pg_server`` fixture is tests/pg_fixtures.py's, shared with the other folders
that run on both backends. Each test gets a database of its own, dropped after it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from aide_memoire import Memory, Settings

from ..pg_fixtures import PgServer, new_database

__all__ = ["PgServer", "new_database", "open_memory"]

if TYPE_CHECKING:
    from .backends import Backend


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    with new_database(pg_server) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """The same store on SQLite (a file) or PostgreSQL (a fresh database): one test,
    both backends."""
    from .backends import open_backend

    if request.param == "sqlite":
        with open_backend("sqlite", home=tmp_path, pg_url=None) as found:
            yield found
        return
    server: PgServer = request.getfixturevalue("pg_server")
    with new_database(server) as url, open_backend("postgres", home=tmp_path, pg_url=url) as found:
        yield found


def open_memory(name: str, home: Path, url: str | None, **settings: object) -> Memory:
    """``Memory`` on the named backend: SQLite in ``home``, or PostgreSQL at ``url``."""
    extra: dict[str, object] = {"home": home, **settings}
    if name == "postgres":
        extra["database_url"] = url
    return Memory(settings=Settings.from_env(**extra))


@pytest.fixture(params=["sqlite", "postgres"])
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def backend_url(backend_name: str, request: pytest.FixtureRequest) -> Iterator[str | None]:
    """A fresh PostgreSQL database for the postgres run, None for SQLite."""
    if backend_name == "sqlite":
        yield None
        return
    server: PgServer = request.getfixturevalue("pg_server")
    with new_database(server) as url:
        yield url


@pytest.fixture
def keyword_memory(backend_name: str, backend_url: str | None, tmp_path: Path,
                   ) -> Iterator[Memory]:
    """``Memory``, keyword-only, on each backend in turn (facts on, as by default)."""
    mem = open_memory(backend_name, tmp_path / "home", backend_url, embedding_model="none")
    try:
        yield mem
    finally:
        mem.close()
