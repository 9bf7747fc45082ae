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
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg

from aide_memoire import Memory
from aide_memoire.engine.core import clock
from aide_memoire.engine.storage.postgres.connection import PgConnection
from aide_memoire.engine.storage.postgres.memories import PostgresMemoryRows
from aide_memoire.engine.storage.store import NewRow


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
def fresh_database(admin_url: str, keep: Path | None = None) -> Iterator[str]:
    """A new, empty database on the server of ``admin_url``, as a URL; dropped after.

    With ``keep`` (a kept bulk store's folder) the database stays, its name recorded in
    ``keep/database.txt``, and a later run with the same folder opens it again."""
    record = keep / "database.txt" if keep is not None else None
    if record is not None and record.exists():
        name = record.read_text().strip()
    else:
        name = f"aide_bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        if record is not None:
            record.parent.mkdir(parents=True, exist_ok=True)
            record.write_text(name + "\n")
    parts = urlsplit(admin_url)
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        if record is None:
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


def bulk_write(memory: Memory, items: Sequence[dict[str, Any]], namespaces: Sequence[str],
               vectors: np.ndarray) -> list[str]:
    """_bulk.bulk_write's storage-layer path on PostgreSQL, batched: the rows and their
    keyword documents in a few statements (``PostgresMemoryRows.insert_many``: the same
    tables as one insert per row, tests/postgres/test_insert_many.py), then the vectors."""
    store = memory.internals.store
    if not isinstance(store, PostgresMemoryRows):
        raise TypeError("the PostgreSQL bulk path needs a PostgreSQL store")
    space = memory.internals.embedder.space
    assert space is not None, "bulk loading needs the embedding model"
    rows = [NewRow(namespace=ns, kind="note", content=it["content"], tags=list(it["tags"]))
            for it, ns in zip(items, namespaces, strict=True)]
    with memory.internals.db.write() as tx:
        if not isinstance(tx, PgConnection):
            raise TypeError("the PostgreSQL bulk path needs a PostgreSQL store")
        stamp = clock.format_time(clock.now())
        written = store.insert_many(tx, rows)
        with tx.outside_pipeline():  # megabytes of vectors: not pipelined (insert_many)
            memory.internals.tables.insert(
                tx, space, [(rowid, row.namespace, vector) for (rowid, _), row, vector
                            in zip(written, rows, vectors, strict=True)], stamp)
    return [memory_id for _, memory_id in written]
