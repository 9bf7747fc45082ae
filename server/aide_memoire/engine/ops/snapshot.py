"""Snapshots of the store with SQLite's online backup API, rotation, and a safe restore.

A snapshot is a consistent copy taken while writers run: the backup copies every page
in one step inside a read transaction, which WAL lets writers continue past. Files go
to ``<home>/snapshots`` (0700) as ``memory-<UTC stamp>.db`` (0600), written under a
temporary name and renamed only once complete and checked.

Restore never destroys the live store: it must hold the store alone (it takes SQLite's
exclusive lock, so a running server or agent makes it refuse), verifies the snapshot
(``integrity_check``, our ``application_id``, a schema this version understands), then
moves the live file aside to ``memory.db.before-restore-<stamp>`` and puts a copy of the
snapshot in its place.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core import clock
from ..core.errors import InvalidInput, StoreError
from ..core.settings import DB_FILENAME
from ..storage.db import SqliteDatabase
from ..storage.driver import SQLITE_BUSY, SQLITE_LOCKED, Driver, primary_code
from ..storage.migrations import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from ..storage.protocol import Connection
from ..trust import audit
from ..trust.anchor import Anchor
from .models import RestoreReport, SnapshotInfo

__all__ = ["DEFAULT_KEEP", "create", "list_snapshots", "restore", "rotate", "verify_file"]

SNAPSHOT_DIR = "snapshots"
DEFAULT_KEEP = 10
_PREFIX, _SUFFIX = "memory-", ".db"
_STAMP = "%Y%m%dT%H%M%S%fZ"


def snapshot_dir(home: Path) -> Path:
    folder = home / SNAPSHOT_DIR
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


def _stamp(moment: datetime | None = None) -> str:
    return (moment or clock.now()).astimezone(UTC).strftime(_STAMP)


def _info(path: Path) -> SnapshotInfo | None:
    stem = path.name[len(_PREFIX) : -len(_SUFFIX)]
    try:
        created = datetime.strptime(stem, _STAMP).replace(tzinfo=UTC)
    except ValueError:
        return None
    return SnapshotInfo(name=path.name, path=str(path), bytes=path.stat().st_size,
                        created_at=created)


def list_snapshots(home: Path) -> list[SnapshotInfo]:
    """The snapshots of a home, newest first (files not named by us are ignored)."""
    folder = home / SNAPSHOT_DIR
    if not folder.is_dir():
        return []
    found = [_info(p) for p in folder.glob(f"{_PREFIX}*{_SUFFIX}") if p.is_file()]
    return sorted((i for i in found if i), key=lambda i: i.created_at, reverse=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create(db: SqliteDatabase, home: Path, *, actor: str) -> SnapshotInfo:
    """Copy the live store, consistently, to a new timestamped snapshot file."""
    folder = snapshot_dir(home)
    path = folder / f"{_PREFIX}{_stamp()}{_SUFFIX}"
    while path.exists():  # two snapshots in one microsecond: take the next stamp
        path = folder / f"{_PREFIX}{_stamp()}{_SUFFIX}"
    partial = folder / f".{path.name}.partial"
    os.close(os.open(partial, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600))
    try:
        source = db.driver_connection()
        target = db.driver.connect(str(partial), isolation_level=None)
        try:
            try:
                source.backup(target)  # every page in one step: one consistent read
            except db.driver.Error as exc:
                raise db.translate(exc) from exc
            # A snapshot is one self-contained file: no -wal beside it.
            target.execute("PRAGMA journal_mode = DELETE")
            problem = _check(target, db.driver)
        finally:
            target.close()
        if problem:
            raise StoreError(f"the snapshot failed its check ({problem}); nothing was kept")
        os.chmod(partial, 0o600)
        _fsync(partial)
        os.replace(partial, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    info = _info(path)
    assert info is not None
    with db.write() as tx:
        audit.append_event(tx, actor=actor, action="snapshot.create",
                           detail={"name": info.name, "bytes": info.bytes})
    return info


def rotate(db: SqliteDatabase, home: Path, *, keep: int = DEFAULT_KEEP, actor: str) -> list[str]:
    """Delete all but the ``keep`` newest snapshots; returns the names deleted."""
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise InvalidInput(f"keep must be a whole number of at least 1, got {keep!r}")
    removed = []
    for info in list_snapshots(home)[keep:]:
        Path(info.path).unlink(missing_ok=True)
        removed.append(info.name)
    if removed:
        with db.write() as tx:
            audit.append_event(tx, actor=actor, action="snapshot.rotate",
                               detail={"keep": keep, "removed": removed})
    return removed


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


def _check(conn: Connection, driver: Driver) -> str | None:
    """None if the open database is a sound aide-memoire store, else what is wrong."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if app_id != APPLICATION_ID:
        return f"application_id {app_id:#x} is not aide-memoire's"
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        return f"schema {version} is newer than this aide-memoire ({SCHEMA_VERSION})"
    problems = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(5)")]
    if problems != ["ok"]:
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
        return _check(conn, driver)
    except driver.Error as exc:
        return f"not a readable SQLite database: {exc}"
    finally:
        conn.close()


def resolve(home: Path, snapshot: str | os.PathLike[str]) -> Path:
    """A snapshot name in ``<home>/snapshots``, or a path to any snapshot file."""
    named = home / SNAPSHOT_DIR / str(snapshot)
    if os.sep not in str(snapshot) and named.is_file():
        return named
    path = Path(snapshot).expanduser()
    if not path.is_file():
        raise InvalidInput(
            f"no snapshot {str(snapshot)!r}: give a name from 'snapshot list' or a file path"
        )
    return path


@contextlib.contextmanager
def _alone(path: Path, driver: Driver) -> Iterator[Any]:
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
                    "CLI command); stop it and run restore again. Nothing was changed"
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


# A rollback journal whose header does not start with this is not "hot": SQLite ignores it.
_JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")


def _tidy_aside(aside: Path) -> None:
    """Remove the side files the exclusive lock left beside the moved-aside store.

    ``_alone`` folded the WAL in and left rollback-journal mode, so the aside file holds
    everything: its ``-shm`` is meaningless without a ``-wal``, and its ``-journal`` was
    only zeroed (exclusive locking mode keeps the file). A journal that is still hot is
    kept, so that SQLite rolls it back when someone opens the aside copy.
    """
    journal = Path(f"{aside}-journal")
    with contextlib.suppress(FileNotFoundError):
        with journal.open("rb") as fh:
            hot = fh.read(len(_JOURNAL_MAGIC)) == _JOURNAL_MAGIC
        if not hot:
            journal.unlink()
    if not Path(f"{aside}-wal").exists():
        Path(f"{aside}-shm").unlink(missing_ok=True)


def restore(
    home: Path, snapshot: str | os.PathLike[str], driver: Driver, *, actor: str = "python"
) -> RestoreReport:
    """Replace the live store by a verified copy of ``snapshot``, keeping the old one aside."""
    source = resolve(home, snapshot)
    problem = verify_file(source, driver)
    if problem:
        raise StoreError(f"snapshot {source} cannot be restored: {problem}. Nothing was changed")
    live = home / DB_FILENAME
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    incoming = home / f".{DB_FILENAME}.restoring"
    os.close(os.open(incoming, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600))
    shutil.copyfile(source, incoming)
    os.chmod(incoming, 0o600)
    _fsync(incoming)
    aside: Path | None = None
    try:
        if live.exists():
            aside = home / f"{DB_FILENAME}.before-restore-{_stamp()}"
            with _alone(live, driver):
                # Renaming while holding the lock: nobody can open the old file between.
                os.replace(live, aside)
                for suffix in ("-wal", "-shm", "-journal"):
                    side = Path(f"{live}{suffix}")
                    if side.exists():
                        os.replace(side, Path(f"{aside}{suffix}"))
                os.replace(incoming, live)
            _tidy_aside(aside)
        else:
            os.replace(incoming, live)
    finally:
        with contextlib.suppress(FileNotFoundError):
            incoming.unlink()
    db = SqliteDatabase(live, driver=driver)  # migrates a snapshot taken by an older version
    try:
        with db.write() as tx:
            count = int(tx.execute("SELECT count(*) FROM memories").fetchone()[0])
            audit.append_event(tx, actor=actor, action="snapshot.restore",
                               detail={"snapshot": source.name,
                                       "kept_aside": aside.name if aside else None})
        # The restored log legitimately ends earlier than the anchor of the replaced store.
        Anchor(live).reset(db.conn())
    finally:
        db.close()
    return RestoreReport(snapshot=str(source), restored_to=str(live),
                         kept_aside=str(aside) if aside else None, memories=count)
