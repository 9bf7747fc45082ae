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
import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from ..core import clock
from ..core.errors import ForeignDatabase, InvalidInput, StoreError
from ..core.settings import DB_FILENAME
from ..storage.db import SqliteDatabase
from ..storage.driver import Driver
from ..trust import audit
from ..trust.anchor import Anchor
from .models import RestoreReport, SnapshotInfo

__all__ = ["DEFAULT_KEEP", "create", "list_snapshots", "restore", "rotate"]

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
        problem = db.backup(partial)
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


# A rollback journal whose header does not start with this is not "hot": SQLite ignores it.
_JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")


def _tidy_aside(aside: Path) -> None:
    """Remove the side files the exclusive lock left beside the moved-aside store.

    ``hold_alone`` folded the WAL in and left rollback-journal mode, so the aside file holds
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


def _live_driver(live: Path, drivers: Callable[[Path], Driver], fallback: Driver) -> Driver:
    """The driver holding the live store during a restore; a file too damaged to be told
    apart (or whose key is gone) is moved aside as it is, as any unusable file."""
    try:
        return drivers(live)
    except ForeignDatabase:
        return fallback.with_keys(())


def restore(
    home: Path, snapshot: str | os.PathLike[str], drivers: Callable[[Path], Driver], *,
    actor: str = "python",
) -> RestoreReport:
    """Replace the live store by a verified copy of ``snapshot``, keeping the old one aside.

    ``drivers`` gives the driver for a file of this home (``driver_for``): an encrypted
    snapshot is opened with the home's key and restored encrypted, as it is. A plain
    snapshot is refused over an encrypted store: restoring it would undo the encryption.
    """
    source = resolve(home, snapshot)
    try:
        driver = drivers(source)
    except ForeignDatabase as exc:  # not a database, or encrypted with a key not found
        raise StoreError(f"snapshot {source} cannot be restored: {exc}. Nothing was "
                         "changed") from None
    live = home / DB_FILENAME
    live_driver = _live_driver(live, drivers, driver) if live.exists() else driver
    if live_driver.encrypted and not driver.encrypted:
        raise StoreError(
            f"snapshot {source} is not encrypted but the store is: restoring it would leave "
            "the store in plain text. Run 'aide-memoire decrypt' first, restore, then "
            "'aide-memoire encrypt'. Nothing was changed"
        )
    problem = SqliteDatabase.verify_file(source, driver)
    if problem:
        raise StoreError(f"snapshot {source} cannot be restored: {problem}. Nothing was changed")
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
            with SqliteDatabase.hold_alone(live, live_driver):
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
            count = db.memory_count(tx)
            audit.append_event(tx, actor=actor, action="snapshot.restore",
                               detail={"snapshot": source.name,
                                       "kept_aside": aside.name if aside else None})
        # The restored log legitimately ends earlier than the anchor of the replaced store.
        Anchor(live).reset(db.conn())
    finally:
        db.close()
    return RestoreReport(snapshot=str(source), restored_to=str(live),
                         kept_aside=str(aside) if aside else None, memories=count)
