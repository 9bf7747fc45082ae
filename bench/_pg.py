"""A PostgreSQL database for a benchmark: a fresh one on a given server, or on a
PostgreSQL + pgvector started from the pgserver wheel in a temporary data directory (as
tests/postgres/conftest.py starts one: a Unix socket, no TCP, deleted afterwards).

A benchmark never writes into a database it did not make: it creates its own
(``aide_bench_<random>``, so the URL's role needs CREATEDB) and drops it at the end.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg


@contextlib.contextmanager
def server_url(url: str | None) -> Iterator[str]:
    """``url`` as given, or the admin URL of a pgserver started for this run."""
    if url is not None:
        yield url
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns at import when XDG is unset
        import pgserver
    # Outside any 0700 folder: run as root, pgserver starts postgres as its own user.
    base = Path(tempfile.mkdtemp(prefix="aide-bench-pg-"))
    try:
        server = pgserver.get_server(base / "pgdata", cleanup_mode="delete")  # type: ignore[attr-defined]
        try:
            yield server.get_uri()
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(base, ignore_errors=True)  # also when the server did not start


@contextlib.contextmanager
def fresh_database(admin_url: str) -> Iterator[str]:
    """A new, empty database on the server of ``admin_url``, as a URL; dropped after."""
    name = f"aide_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    parts = urlsplit(admin_url)
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def store_bytes(url: str, schema: str = "aide_memoire") -> int:
    """Bytes on disk of the store's tables, their indexes and TOAST (partitions included)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind IN ('r', 'm')",
            (schema,),
        ).fetchone()
    return int(row[0]) if row else 0
