"""What snapshots, restore and the doctor ask of a SQLite file: a consistent copy, its
checks (our header, schema, ``integrity_check``), the keyword and vector indexes in step
with the rows, and the exclusive hold a restore replaces it under.

SQLite's alone (a PostgreSQL store has no file to copy or hold; the services refuse
these there, naming the setting: docs/postgres.md). Reached through the methods of
db.py's ``SqliteDatabase``, which the features are handed; beside db.py for the reason
storage/sqlite_steps.py gives.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..core.errors import StoreError
from .driver import SQLITE_BUSY, SQLITE_LOCKED, Driver, primary_code
from .migrations import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from .protocol import Connection

__all__ = [
    "KeywordHealth", "application_id", "backup", "check", "clear_keyword_index",
    "delete_vector_orphans", "hold_alone", "integrity", "keyword_health", "memory_count",
    "vector_orphans", "verify_file",
]


# -- copies and their checks -------------------------------------------------------------

def backup(source: Any, driver: Driver, target: Path,
           translate: Callable[[BaseException], BaseException]) -> str | None:
    """Copy the live store (its driver connection ``source``) into the (empty) file
    ``target`` with SQLite's backup API, every page in one step (one consistent read), as
    one self-contained file (no -wal beside it); what is wrong with the copy, or None."""
    copy = driver.connect(str(target), isolation_level=None)
    try:
        try:
            source.backup(copy)
        except driver.Error as exc:
            raise translate(exc) from exc
        copy.execute("PRAGMA journal_mode = DELETE")
        return check(copy, driver)
    finally:
        copy.close()


def _columns(conn: Connection) -> dict[str, tuple[str, ...]]:
    """Each table's column names: ordinary tables and virtual tables' shadow tables. A
    virtual table is named with no columns: reading them needs its module (a vec0 table
    cannot be described by a connection without sqlite-vec), and its shadow tables,
    which are ordinary, already say what it holds."""
    rows = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    out: dict[str, tuple[str, ...]] = {}
    for name, sql in [(str(r[0]), str(r[1] or "")) for r in rows]:
        if sql.lstrip().upper().startswith("CREATE VIRTUAL TABLE"):
            out[name] = ()
        else:
            out[name] = tuple(str(c[1]) for c in conn.execute(f'PRAGMA table_info("{name}")'))
    return out


@functools.lru_cache(maxsize=8)
def _expected(driver: Driver, version: int) -> dict[str, tuple[str, ...]]:
    """The tables and columns our own migrations 1..version create, in a scratch database."""
    scratch = driver.connect(":memory:", isolation_level=None)
    try:
        for step in MIGRATIONS:
            if step.version <= version:
                step.apply(scratch)
        return _columns(scratch)
    finally:
        scratch.close()


def _schema_problem(conn: Connection, driver: Driver, version: int) -> str | None:
    """A file with our header but not our tables (crafted, or damaged) is not a store."""
    if version < 1:
        return "it has no schema (user_version 0): it was never an aide-memoire store"
    actual = _columns(conn)
    expected = _expected(driver, version)
    missing = sorted(set(expected) - set(actual))
    if missing:
        return f"{len(missing)} of its tables are missing ({', '.join(missing[:5])})"
    for table, columns in expected.items():
        lacking = [c for c in columns if c not in actual[table]]
        if lacking:
            return f"table {table} lacks columns {', '.join(lacking[:5])}"
    return None


def check(conn: Connection, driver: Driver) -> str | None:
    """None if the open database is a sound aide-memoire store, else what is wrong."""
    app_id = application_id(conn)
    if app_id != APPLICATION_ID:
        return f"application_id {app_id:#x} is not aide-memoire's"
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        return f"schema {version} is newer than this aide-memoire ({SCHEMA_VERSION})"
    problems = integrity(conn, 5)
    if problems:
        return "integrity_check: " + "; ".join(problems)
    return _schema_problem(conn, driver, int(version))


def verify_file(path: Path, driver: Driver) -> str | None:
    """None if the file at ``path`` is a sound store to restore, else what is wrong."""
    if not path.is_file():
        return f"{path} does not exist"
    try:
        conn = driver.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    except driver.Error as exc:
        return f"cannot open: {exc}"
    try:
        return check(conn, driver)
    except driver.Error as exc:
        return f"not a readable SQLite database: {exc}"
    finally:
        conn.close()


@contextlib.contextmanager
def hold_alone(path: Path, driver: Driver) -> Iterator[Any]:
    """Hold the live store with SQLite's exclusive lock, its WAL folded in and removed.

    Yields None when the file is not a usable database (nothing can be holding it
    usefully, and it cannot be checkpointed): it is then moved aside as it is.
    """
    conn = driver.connect(str(path), isolation_level=None, timeout=0)
    try:
        try:
            conn.execute("PRAGMA locking_mode = EXCLUSIVE")
            conn.execute("BEGIN EXCLUSIVE")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            conn.execute("COMMIT")
        except driver.OperationalError as exc:
            if primary_code(exc) in (SQLITE_BUSY, SQLITE_LOCKED):
                raise StoreError(
                    f"another process has the store {path} open (an MCP server, an agent, a "
                    "CLI command); stop it and run the command again. Nothing was changed"
                ) from None
            yield None
            return
        except driver.DatabaseError:
            yield None
            return
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        # Rollback-journal mode removes the -wal file: the main file then holds everything.
        conn.execute("PRAGMA journal_mode = DELETE")
        yield conn
    finally:
        conn.close()


# -- the doctor's checks ----------------------------------------------------------------

def application_id(conn: Connection) -> int:
    return int(conn.execute("PRAGMA application_id").fetchone()[0])


def integrity(conn: Connection, limit: int) -> list[str]:
    """SQLite's ``integrity_check``: up to ``limit`` problems, none when the file is sound."""
    rows = [str(r[0]) for r in conn.execute(f"PRAGMA integrity_check({int(limit)})")]
    return [] if rows == ["ok"] else rows


def memory_count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])


class KeywordHealth:
    """The keyword index against the rows: FTS5's own check, documents without a row and
    rows without a document."""

    def __init__(self, rows: int, docs: int, missing: int, orphans: int,
                 problem: str | None) -> None:
        self.rows, self.docs, self.missing, self.orphans, self.problem = (
            rows, docs, missing, orphans, problem)


def keyword_health(conn: Connection, error: type[Exception]) -> KeywordHealth:
    """``error``: the driver's error class (what FTS5's check raises when it fails)."""
    problem = None
    try:
        conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')")
    except error as exc:
        problem = f"FTS5 integrity-check: {exc}"
    docs = conn.execute("SELECT count(*) FROM memory_fts_docsize").fetchone()[0]
    missing = conn.execute(
        "SELECT count(*) FROM memories m WHERE NOT EXISTS "
        "(SELECT 1 FROM memory_fts_docsize d WHERE d.id = m.rowid)").fetchone()[0]
    orphans = conn.execute(
        "SELECT count(*) FROM memory_fts_docsize d WHERE NOT EXISTS "
        "(SELECT 1 FROM memories m WHERE m.rowid = d.id)").fetchone()[0]
    return KeywordHealth(memory_count(conn), int(docs), int(missing), int(orphans), problem)


def clear_keyword_index(tx: Connection) -> None:
    """Empty the keyword index (the rows then index it again: MemoryRows.index_all)."""
    tx.execute("INSERT INTO memory_fts(memory_fts) VALUES ('delete-all')")


def vector_orphans(conn: Connection, table: str) -> list[tuple[int, str]]:
    """(rowid, namespace) of the vectors in ``table`` whose memory is gone."""
    return [(int(r), str(ns)) for r, ns in conn.execute(
        f"SELECT v.rowid, v.namespace FROM {table} v WHERE NOT EXISTS "
        "(SELECT 1 FROM memories m WHERE m.rowid = v.rowid)")]


def delete_vector_orphans(tx: Connection, key: str, table: str) -> int:
    """Delete them; the mirror reloads the namespaces they were in (a new epoch)."""
    orphans = vector_orphans(tx, table)
    for rowid, _ in orphans:
        tx.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
    for namespace in {ns for _, ns in orphans}:
        tx.execute("UPDATE vector_state SET epoch = epoch + 1 "
                   "WHERE space = ? AND namespace = ?", (key, namespace))
    return len(orphans)
