"""The two ends of a copy: a store opened read-only (the source) or for writing (the target).

A store is named by a path (a SQLite file) or a ``postgresql://`` URL. The source is
never written: SQLite is opened ``mode=ro`` and PostgreSQL on a plain connection (not
``PostgresDatabase``, which would migrate an older schema), each inside one read
snapshot, and a schema version other than this aide-memoire's is refused before any row
is read (migrating the source would be writing to it). The target is opened the
ordinary way, so a new one gets the current schema; the copy is one of its write
transactions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ...core.errors import ForeignDatabase, InvalidInput, NewerSchema, StoreError
from ..db import SqliteDatabase
from ..driver import Driver
from ..migrations import APPLICATION_ID, SCHEMA_VERSION
from ..protocol import Connection, Dialect
from ..repositories import MemoryRows
from ..sqlite.memory_rows import SqliteMemoryRows
from ..sqlite.vectors import SqliteVectorIndex

__all__ = [
    "Source", "Target", "TargetDatabase", "is_url", "open_source", "open_target", "quote",
    "stream", "write_rows",
]

_BATCH = 1000


def is_url(spec: str) -> bool:
    """A server store's URL; any other scheme is refused rather than read as a path."""
    if spec.startswith(("postgresql://", "postgres://")):
        return True
    if "://" in spec:
        raise InvalidInput(f"not a store this copier knows: {spec.split('://')[0]}://...; "
                           "name a postgresql://user@host/database URL or a SQLite file")
    return False


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class TargetDatabase(Protocol):
    """What the copier uses of a target store (SQLite's SqliteDatabase or PostgresDatabase)."""

    def write(self) -> contextlib.AbstractContextManager[Connection]: ...

    def conn(self) -> Connection: ...

    def schema_version(self) -> int: ...

    def close(self) -> None: ...


@dataclass
class Source:
    where: str
    dialect: Dialect
    conn: Connection


@dataclass
class Target:
    where: str
    dialect: Dialect
    db: TargetDatabase
    rows: MemoryRows  # the target's memories repository (and its two indexes)
    path: Path | None  # the SQLite file (its audit anchor lives beside it); None on a server
    committed: bool = False  # set by the copier: a file made for a copy that failed goes


def _older(where: str, version: int) -> StoreError:
    return StoreError(
        f"{where} has schema version {version}, older than this aide-memoire's "
        f"({SCHEMA_VERSION}); it was left untouched. Open it once with this version (any "
        "command, e.g. 'aide-memoire status') so it migrates, then copy it"
    )


@contextlib.contextmanager
def open_source(spec: str, driver: Driver) -> Iterator[Source]:
    """The store at ``spec``, read-only, in one snapshot for the whole copy."""
    if is_url(spec):
        with _postgres_source(spec) as found:
            yield found
        return
    with _sqlite_source(Path(spec).expanduser(), driver) as found:
        yield found


@contextlib.contextmanager
def _sqlite_source(path: Path, driver: Driver) -> Iterator[Source]:
    if not path.is_file():
        raise InvalidInput(f"no store at {path}: name an aide-memoire SQLite file or a "
                           "postgresql:// URL with --from")
    try:
        conn = driver.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                              isolation_level=None, check_same_thread=False)
    except driver.Error as exc:
        raise StoreError(f"cannot open {path} to read it: {exc}") from None
    try:
        app_id, version = conn.execute(
            "SELECT (SELECT application_id FROM pragma_application_id), "
            "(SELECT user_version FROM pragma_user_version)").fetchone()
        if app_id != APPLICATION_ID:
            raise ForeignDatabase(f"{path} is not an aide-memoire store; it was left untouched")
        if version > SCHEMA_VERSION:
            raise NewerSchema(
                f"{path} has schema version {version}, newer than this aide-memoire "
                f"understands ({SCHEMA_VERSION}); it was left untouched. Upgrade aide-memoire")
        if version < SCHEMA_VERSION:
            raise _older(str(path), version)
        _load_vec(conn, driver)
        conn.execute("BEGIN")  # one snapshot: a writer elsewhere cannot split the copy
        yield Source(str(path), "sqlite", conn)
    except driver.Error as exc:
        raise StoreError(f"reading {path} failed: {exc}; nothing was written to it") from None
    finally:
        with contextlib.suppress(driver.Error):
            conn.close()


def _load_vec(conn: Any, driver: Driver) -> None:
    """sqlite-vec on a read-only connection, when it loads; a store with vectors and no
    sqlite-vec fails later, naming its vector table."""
    if not driver.can_load_extensions:
        return
    with contextlib.suppress(Exception):  # any loader failure: keyword-only, as SqliteDatabase
        import sqlite_vec

        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)


@contextlib.contextmanager
def _postgres_source(url: str) -> Iterator[Source]:
    import psycopg

    from ..postgres.connection import PgConnection, register_vector
    from ..postgres.database import describe
    from ..postgres.errors import translate
    from ..postgres.migrations import stored_version

    where = describe(url)
    schema = "aide_memoire"  # PostgresDatabase's default, the one open_context uses
    try:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=10,
                              application_name="aide-memoire migrate-store",
                              options=f"-c search_path={schema},public")
    except psycopg.Error as exc:
        raise translate(exc, where) from None
    try:
        register_vector(raw)
        conn = PgConnection(raw, where)
        version = stored_version(conn, schema)
        if version is None:
            raise StoreError(f"{where} holds no aide-memoire store (schema {schema} is empty "
                             "or missing): nothing to copy")
        if version > SCHEMA_VERSION:
            raise NewerSchema(
                f"{where} has schema version {version}, newer than this aide-memoire "
                f"understands ({SCHEMA_VERSION}); it was left untouched. Upgrade aide-memoire")
        if version < SCHEMA_VERSION:
            raise _older(where, version)
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield Source(where, "postgres", conn)
    except psycopg.Error as exc:
        raise translate(exc, where) from None
    finally:
        raw.close()


@contextlib.contextmanager
def open_target(spec: str, driver: Driver) -> Iterator[Target]:
    """The store at ``spec`` opened for writing (made, with the current schema, if new)."""
    if is_url(spec):
        from ..postgres.database import PostgresDatabase
        from ..postgres.memories import PostgresMemoryRows

        server = PostgresDatabase(spec)
        try:
            yield Target(server.where, "postgres", server, PostgresMemoryRows(), None)
        finally:
            server.close()
        return
    path = Path(spec).expanduser()
    if path.is_dir():
        raise InvalidInput(f"{path} is a folder: name the SQLite file to copy into "
                           "(e.g. memory.db)")
    db = SqliteDatabase(path, driver=driver)
    rows = SqliteMemoryRows(SqliteVectorIndex(vec_available=db.vector_support().available))
    target = Target(str(path), "sqlite", db, rows, path)
    try:
        yield target
    finally:
        db.close()
        if db.created and not target.committed:  # refused or rolled back: no empty file left
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)


def stream(conn: Connection, dialect: Dialect, sql: str) -> Iterator[tuple[Any, ...]]:
    """The rows of a query without parameters, read in batches (a server-side cursor on
    PostgreSQL, inside the open transaction: 100k memories never sit in memory at once)."""
    if dialect == "sqlite":
        for row in conn.execute(sql):
            yield tuple(row)
        return
    from ..postgres.connection import PgConnection

    assert isinstance(conn, PgConnection)
    with conn.raw.cursor(name="aide_memoire_transfer") as cursor:
        cursor.itersize = 2000
        cursor.execute(sql.encode())
        for row in cursor:
            yield tuple(row)


def write_rows(tx: Connection, dialect: Dialect, table: str, columns: tuple[str, ...],
               rows: Iterable[tuple[Any, ...]]) -> Iterator[int]:
    """Insert ``rows`` (values in ``columns`` order); yields the count written so far,
    every batch. PostgreSQL gets one COPY (identity keys taken as given, as COPY does);
    SQLite an ``executemany`` per batch of rows."""
    names = ", ".join(quote(c) for c in columns)
    if dialect == "postgres":
        from ..postgres.connection import PgConnection

        assert isinstance(tx, PgConnection)
        with tx.raw.cursor() as cursor, cursor.copy(
                f"COPY {quote(table)} ({names}) FROM STDIN".encode()) as copy:
            done = 0
            for row in rows:
                copy.write_row(row)
                done += 1
                if done % _BATCH == 0:
                    yield done
        yield done
        return
    sql = f"INSERT INTO {quote(table)} ({names}) VALUES ({', '.join('?' * len(columns))})"
    batch: list[tuple[Any, ...]] = []
    done = 0
    for row in rows:
        batch.append(row)
        if len(batch) == _BATCH:
            tx.executemany(sql, batch)
            done += len(batch)
            batch.clear()
            yield done
    if batch:
        tx.executemany(sql, batch)
        done += len(batch)
    yield done
