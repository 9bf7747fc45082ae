"""The PostgreSQL schema: every SQLite step, recorded; refusing schemas that are not ours."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

from aide_memoire.engine.data.postgres import PostgresDatabase
from aide_memoire.engine.db import Database
from aide_memoire.engine.errors import ForeignDatabase, InvalidInput, NewerSchema, StoreError
from aide_memoire.engine.migrations import MIGRATIONS

from .rows import insert_memory

# SQLite-only parts of a new store: sqlite-vec tables come with a space, FTS5 shadow tables.
_SQLITE_ONLY_PREFIXES = ("memory_fts_", "sqlite_")


def _sqlite_tables(home: Path) -> set[str]:
    db = Database(home / "memory.db")
    try:
        names = {
            str(n)
            for (n,) in db.conn().execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
    finally:
        db.close()
    return {n for n in names if not n.startswith(_SQLITE_ONLY_PREFIXES)}


def _pg_tables(url: str, schema: str = "aide_memoire") -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
        ).fetchall()
    return {str(r[0]) for r in rows}


def test_a_new_database_gets_every_step_recorded_with_sqlite_names(pg_url: str) -> None:
    with PostgresDatabase(pg_url) as db:
        assert db.applied == [m.version for m in MIGRATIONS]
        assert db.schema_version() == MIGRATIONS[-1].version
        with db.read() as conn:
            recorded = conn.execute(
                "SELECT version, name FROM schema_migrations ORDER BY version"
            ).fetchall()
    assert recorded == [(m.version, m.name) for m in MIGRATIONS]
    with PostgresDatabase(pg_url) as again:
        assert again.applied == []


def test_the_tables_are_those_of_a_new_sqlite_store(pg_url: str, tmp_path: Path) -> None:
    PostgresDatabase(pg_url).close()
    # namespace_roles is PostgreSQL's own: row-level security (security.py).
    assert _pg_tables(pg_url) - {"namespace_roles"} == _sqlite_tables(tmp_path)


def test_concurrent_openers_migrate_once(pg_url: str) -> None:
    applied: list[list[int]] = []
    errors: list[BaseException] = []

    def open_store() -> None:
        try:
            with PostgresDatabase(pg_url) as db:
                applied.append(db.applied)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(applied, key=len) == [[], [], [], [m.version for m in MIGRATIONS]]


def test_a_schema_of_another_program_is_refused_and_left_alone(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA aide_memoire")
        conn.execute("CREATE TABLE aide_memoire.orders (id int)")
        conn.execute("INSERT INTO aide_memoire.orders VALUES (7)")
    with pytest.raises(ForeignDatabase, match="another program"):
        PostgresDatabase(pg_url)
    assert _pg_tables(pg_url) == {"orders"}


def test_a_newer_schema_is_refused(pg_url: str) -> None:
    PostgresDatabase(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO aide_memoire.schema_migrations VALUES (99, 'future', '2099-01-01')"
        )
    with pytest.raises(NewerSchema, match="99"):
        PostgresDatabase(pg_url)


def test_another_schema_name_keeps_stores_apart(pg_url: str) -> None:
    with PostgresDatabase(pg_url) as a, PostgresDatabase(pg_url, schema="team_b") as b:
        with a.write() as tx:
            insert_memory(tx, "project:x", "only in the first store")
        with b.read() as conn:
            assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)


@pytest.mark.parametrize(
    "url", ["sqlite:///tmp/x.db", "/tmp/memory.db", "mysql://host/db"]
)
def test_a_url_that_is_not_postgresql_is_refused(url: str) -> None:
    with pytest.raises(InvalidInput, match="not a PostgreSQL URL"):
        PostgresDatabase(url)


def test_a_bad_schema_name_is_refused(pg_url: str) -> None:
    with pytest.raises(InvalidInput, match="schema name"):
        PostgresDatabase(pg_url, schema="x; DROP TABLE memories")


def test_an_unreachable_server_is_a_store_error_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://someone:s3cret@/db?host={tmp_path}&connect_timeout=2"
    with pytest.raises(StoreError, match="cannot use") as caught:
        PostgresDatabase(url)
    assert "s3cret" not in str(caught.value)
