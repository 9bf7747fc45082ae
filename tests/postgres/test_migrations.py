"""The PostgreSQL schema: every SQLite step, recorded; refusing schemas that are not ours."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

from aide_memoire.engine.core.errors import ForeignDatabase, InvalidInput, NewerSchema, StoreError
from aide_memoire.engine.storage.db import SqliteDatabase
from aide_memoire.engine.storage.migrations import MIGRATIONS
from aide_memoire.engine.storage.postgres import PostgresDatabase

from .rows import insert_memory

# SQLite-only parts of a new store: sqlite-vec tables come with a space, FTS5 shadow tables.
_SQLITE_ONLY_PREFIXES = ("memory_fts_", "sqlite_")


def _sqlite_schema(home: Path) -> tuple[dict[str, list[str]], set[str]]:
    """A new SQLite store's tables (with their columns, in order) and named indexes."""
    db = SqliteDatabase(home / "memory.db")
    try:
        conn = db.conn()
        names = [
            str(n)
            for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not str(n).startswith(_SQLITE_ONLY_PREFIXES)
        ]
        columns = {
            name: [str(row[1]) for row in conn.execute(f"PRAGMA table_info({name})")]
            for name in names
        }
        indexes = {
            str(n)
            for (n,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            )
        }
    finally:
        db.close()
    return columns, indexes


def _pg_schema(url: str, schema: str = "aide_memoire") -> tuple[dict[str, list[str]], set[str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = %s ORDER BY table_name, ordinal_position",
            (schema,),
        ).fetchall()
        indexes = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = %s", (schema,)
        ).fetchall()
    columns: dict[str, list[str]] = {}
    for table, column in rows:
        columns.setdefault(str(table), []).append(str(column))
    return columns, {str(i) for (i,) in indexes}


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
    """Same tables, same columns in the same order, every SQLite index: the two DDLs are
    written twice (one per dialect), so this is what keeps them from drifting apart."""
    PostgresDatabase(pg_url).close()
    sqlite_columns, sqlite_indexes = _sqlite_schema(tmp_path)
    pg_columns, pg_indexes = _pg_schema(pg_url)
    # PostgreSQL's own: row-level security (security.py); FTS5's postings as plain
    # tables here (schema step 11) where SQLite has an FTS5 virtual table, with each
    # term's document count (step 13).
    assert pg_columns.pop("namespace_roles") == ["namespace", "role"]
    assert pg_columns.pop("keyword_terms") == ["term", "namespace", "docs"]
    assert pg_columns.pop("keyword_docs") == ["rowid", "namespace", "length"]
    assert pg_columns.pop("keyword_postings") == ["term", "namespace", "rowid", "freqs", "places"]
    assert pg_columns.pop("keyword_totals") == ["backend", "docs", "tokens"]
    sqlite_columns.pop("memory_fts")
    # SQLite's own: the mirror's int8 blocks (step 14), read at start-up instead of vec0;
    # PostgreSQL's mirror reads its vector table.
    for table in ("vector_blocks", "vector_tombstones", "vector_block_state"):
        sqlite_columns.pop(table)
    assert pg_columns == sqlite_columns
    assert sqlite_indexes <= pg_indexes


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
    assert set(_pg_schema(pg_url)[0]) == {"orders"}


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


def test_without_the_driver_the_backend_names_its_extra() -> None:
    # psycopg made unimportable in a fresh interpreter: the install a user without the
    # extra has (this environment has it, for the tests above).
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from aide_memoire.engine.core.errors import PartMissing\n"
        "try:\n"
        "    import aide_memoire.engine.storage.postgres\n"
        "except PartMissing as exc:\n"
        "    print(exc.extra, exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
        check=True,
    )
    assert done.stdout.startswith("postgres ") and "aide-memoire[postgres]" in done.stdout
