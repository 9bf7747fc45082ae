"""A real PostgreSQL with pgvector for the backend's tests, from the pgserver wheel.

One server for the session, in a fresh temporary data directory (no system service,
nothing listening on TCP: a Unix socket in that directory), stopped and deleted at the
end. Each test gets a database of its own, dropped after it.
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
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

import psycopg
import pytest

from aide_memoire import Memory, Settings

if TYPE_CHECKING:
    from .backends import Backend


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
    server = pgserver.get_server(base / "pgdata", cleanup_mode="delete")
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
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server.admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield server.url(name)
    finally:
        with psycopg.connect(server.admin_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


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
    """``Memory``, keyword-only, on each backend in turn."""
    mem = open_memory(backend_name, tmp_path / "home", backend_url, embedding_model="none",
                      extract_facts=False)
    try:
        yield mem
    finally:
        mem.close()
