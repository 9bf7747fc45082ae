"""The session's PostgreSQL server (pgserver wheel) and fresh databases on it.

Registered by tests/conftest.py, so every test folder shares ONE server per session:
tests/postgres (the backend's own tests) and the feature suites that run on both
backends (tests/facts). The server starts only when a test asks for ``pg_server``.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

__all__ = ["PgServer", "new_database", "pg_server"]


@dataclass(frozen=True)
class PgServer:
    admin_url: str
    socket_dir: str
    data_dir: Path

    def url(self, database: str, user: str = "postgres") -> str:
        return f"postgresql://{quote(user)}@/{database}?host={quote(self.socket_dir)}"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    with warnings.catch_warnings():
        # platformdirs warns, at pgserver's import, that XDG_RUNTIME_DIR is unset (CI).
        warnings.simplefilter("ignore")
        import pgserver
    # Not under pytest's 0700 base folder: run as root, pgserver starts postgres as its
    # own system user and opens every parent of the data directory to it.
    base = Path(tempfile.mkdtemp(prefix="aide-pg-"))
    server = pgserver.get_server(  # type: ignore[attr-defined]  # not in its __all__
        base / "pgdata", cleanup_mode="delete")
    try:
        admin = server.get_uri()
        socket_dir = dict(
            part.split("=", 1) for part in urlsplit(admin).query.split("&") if "=" in part
        )["host"]
        yield PgServer(admin_url=admin, socket_dir=socket_dir, data_dir=base / "pgdata")
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def new_database(server: PgServer) -> Iterator[str]:
    """A new, empty database of the server, as the superuser's URL; dropped after."""
    import psycopg  # the postgres extra: imported by the tests that use a server only

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server.admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield server.url(name)
    finally:
        with psycopg.connect(server.admin_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
