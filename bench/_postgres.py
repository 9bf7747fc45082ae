"""A throwaway PostgreSQL + pgvector server for a benchmark run (the pgserver wheel).

Started in a fresh temporary data directory, reached over its Unix socket, stopped and
deleted when the ``with`` block ends, as tests/postgres/conftest.py does for the tests.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit


@contextlib.contextmanager
def temporary_server(database: str = "bench") -> Iterator[str]:
    """The URL of a new database on a new local server, for the block's duration."""
    with warnings.catch_warnings():
        # platformdirs warns, at pgserver's import, that XDG_RUNTIME_DIR is unset.
        warnings.simplefilter("ignore")
        import pgserver
    import psycopg

    base = Path(tempfile.mkdtemp(prefix="aide-pg-bench-"))
    server = pgserver.get_server(  # type: ignore[attr-defined]  # untyped re-export
        base / "pgdata", cleanup_mode="delete")
    try:
        admin = server.get_uri()
        query = dict(p.split("=", 1) for p in urlsplit(admin).query.split("&") if "=" in p)
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {database}")
        yield f"postgresql://postgres@/{database}?host={quote(query['host'])}"
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)
