"""The facts suites on both backends: SQLite (a file in the home) and PostgreSQL (a
fresh database of the session's server, tests/pg_fixtures.py).

``facts_backend`` is the one parameter; a store fixture asks :func:`facts_settings` for
the settings of its backend. The PostgreSQL side is slow-tier (tests/conftest.py marks
every test with a "postgres" parameter slow); the SQLite side stays fast.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import Settings

from ..pg_fixtures import PgServer, new_database

BACKENDS = ("sqlite", "postgres")


@pytest.fixture(scope="module", params=BACKENDS)
def facts_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextlib.contextmanager
def facts_settings(
    request: pytest.FixtureRequest, backend: str, home: Path, **settings: object
) -> Iterator[Settings]:
    """Settings for a store in ``home`` on ``backend`` (a new database on PostgreSQL,
    dropped after)."""
    if backend == "sqlite":
        yield Settings(home=home, **settings)  # type: ignore[arg-type]
        return
    server: PgServer = request.getfixturevalue("pg_server")
    with new_database(server) as url:
        yield Settings(home=home, database_url=url, **settings)  # type: ignore[arg-type]
