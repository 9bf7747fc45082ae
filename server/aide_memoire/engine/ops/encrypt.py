"""Moving a home's store in and out of encryption, and rotating its key, crash-safely.

Each file (the live store, then every snapshot) is converted the same way:

1. the live store is held alone (SQLite's exclusive lock, its WAL folded into the file:
   ``SqliteDatabase.hold_alone``), so no writer can commit to a file about to be replaced;
2. ``sqlcipher_export`` writes every table, index and virtual table (FTS5, vec0 and
   their shadow tables) into a new file beside it, under the new key (or none);
3. the new file is opened afresh with that key and verified: ``integrity_check``, our
   application id and schema version, and every ordinary table's row count and content
   hash equal to the old file's (``storage/cipher.py``);
4. only then is it fsynced and renamed over the old one (one atomic ``rename``).

So at every instant the path holds either the old file, whole, or the new one, verified.
The keys are written before the files that need them: ``encrypt`` keeps the key first
(a plain store does not need it), ``rekey`` keeps the new key as *pending* first, converts,
then promotes it. Opening tries the current key and the pending one (``storage/keys.py``),
so a run killed at any point (the crash points below) leaves a store that opens, with
the old key or the new one. Running the command again finishes the job.

Crash points (``AIDE_MEMOIRE_CRASH_AT``): ``encrypt.key_kept``, ``encrypt.exported``,
``encrypt.swapped``, ``encrypt.snapshots``, ``rekey.pending_kept``, ``rekey.exported``,
``rekey.swapped``, ``rekey.promoted``, ``decrypt.exported``, ``decrypt.swapped``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ...logs import get_logger
from ..core.crashpoints import crash_point
from ..core.errors import InvalidInput, KeyUnavailable, StoreError
from ..core.settings import Settings
from ..storage import cipher
from ..storage.db import SqliteDatabase
from ..storage.driver import Driver, driver_for, encrypted_driver, is_encrypted, key_opens
from ..storage.keys import KeyPlaces, StoreKey, new_key
from ..storage.protocol import Connection
from ..trust import audit
from . import snapshot as snapshots
from .models import EncryptionReport

__all__ = ["decrypt", "encrypt", "rekey"]

log = get_logger(__name__)

KeyIn = Literal["auto", "keychain", "file"]


@dataclass(frozen=True)
class _Job:
    op: Literal["encrypt", "decrypt", "rekey"]
    cipher: Driver  # sqlcipher3 with the keys that may open a file as it is now
    target: StoreKey | None  # the key the new files get (None: plain)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _convert_open(conn: Connection, path: Path, job: _Job) -> None:
    """Export, verify and swap in the file ``conn`` holds (the caller holds it alone)."""
    partial = path.with_name(f".{path.name}.{job.op}-partial")
    try:
        cipher.load_vec(conn)
        expected = cipher.table_digests(conn)
        cipher.export_to(conn, partial, job.target)
        crash_point(f"{job.op}.exported")
        cipher.check_converted(job.cipher.module, partial, job.target, expected)
        _fsync(partial)
        for suffix in ("-wal", "-shm"):  # folded in already; never replayed onto the new file
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        os.replace(partial, path)
        _fsync(path.parent)
    finally:
        partial.unlink(missing_ok=True)


def _source(job: _Job, path: Path) -> Driver:
    """sqlcipher3 keyed for the file as it is now: unkeyed for a plain file."""
    return job.cipher if is_encrypted(path) else job.cipher.with_keys(())


def _convert_live(path: Path, job: _Job) -> None:
    if SqliteDatabase.open_in_this_process(path):
        raise StoreError(f"this process has the store {path} open (a Memory not closed); "
                         f"close it and run {job.op} again. Nothing was changed")
    with SqliteDatabase.hold_alone(path, _source(job, path)) as conn:
        if conn is None:
            raise StoreError(f"{path} cannot be read as a store; nothing was changed. Run "
                             "'aide-memoire doctor' or restore a snapshot first")
        _convert_open(conn, path, job)
    crash_point(f"{job.op}.swapped")


def _convert_file(path: Path, job: _Job) -> None:
    """A snapshot: nobody writes it, so no lock; the same export, check and swap."""
    conn = _source(job, path).connect(str(path), isolation_level=None)
    try:
        _convert_open(conn, path, job)
    finally:
        conn.close()


def _done(path: Path, job: _Job) -> bool:
    """Whether ``path`` already is as the job leaves it (a re-run skips it)."""
    if job.target is None:
        return not is_encrypted(path)
    if not is_encrypted(path):
        return False
    conn = job.cipher.module.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return key_opens(conn, job.target)
    finally:
        conn.close()


def _snapshot_paths(home: Path) -> list[Path]:
    return [Path(info.path) for info in snapshots.list_snapshots(home)]


def _run(settings: Settings, job: _Job, *, actor: str) -> list[str]:
    """Convert the live store, then each snapshot; returns the snapshot names converted."""
    live = settings.db_path
    if live.exists() and not _done(live, job):
        _convert_live(live, job)
    elif not live.exists() and job.target is not None:
        SqliteDatabase(live, driver=job.cipher.with_keys((job.target,))).close()  # a new store
    converted = []
    for path in _snapshot_paths(settings.home):
        if not _done(path, job):
            _convert_file(path, job)
            converted.append(path.name)
            crash_point(f"{job.op}.snapshots")
    db = SqliteDatabase(live, driver=driver_for(live, settings))
    try:
        with db.write() as tx:
            audit.append_event(tx, actor=actor, action=f"store.{job.op}",
                               detail={"snapshots": len(converted)})
    finally:
        db.close()
    return converted


def _places(settings: Settings) -> KeyPlaces:
    return KeyPlaces.for_home(settings)


def _require_sqlite(settings: Settings, what: str) -> None:
    if settings.database_url is not None:
        raise InvalidInput(f"{what} applies to the SQLite store; this home uses the "
                           "PostgreSQL store AIDE_MEMOIRE_DATABASE_URL names (its encryption "
                           "is the server's: docs/postgres.md)")


def encrypt(settings: Settings, *, key_in: KeyIn = "auto", actor: str = "python"
            ) -> EncryptionReport:
    """Encrypt the home's store and its snapshots (a new, empty store if there is none)."""
    _require_sqlite(settings, "encrypt")
    places = _places(settings)
    live = settings.db_path
    if is_encrypted(live):
        current = driver_for(live, settings)  # the key that opens it, or a clear error
        key, kept = current.keys[0], current.keys[0].place
    else:
        found, _ = places.candidates()
        usable = [k for k in found if not k.pending]
        if usable:  # the environment's key, or one a run cut short kept already
            key, kept = usable[0], usable[0].place
        else:
            keeper = places.keeper(key_in)
            secret = new_key()
            kept = places.keep(secret, keeper, pending=False)
            key = StoreKey(secret, kept)
    crash_point("encrypt.key_kept")
    job = _Job("encrypt", encrypted_driver((key,), settings.sqlite_driver), key)
    converted = _run(settings, job, actor=actor)
    log.info("store_encrypted", path=str(live), key=kept, snapshots=len(converted))
    return EncryptionReport(action="encrypt", path=str(live), encrypted=True, key_place=kept,
                            snapshots=converted)


def decrypt(settings: Settings, *, actor: str = "python") -> EncryptionReport:
    """Write the home's store and its snapshots back in plain SQLite; the key stays where
    it is (a backup elsewhere may still need it)."""
    _require_sqlite(settings, "decrypt")
    live = settings.db_path
    found, looked = _places(settings).candidates()
    if is_encrypted(live):
        keys = driver_for(live, settings).keys
    elif found:  # the store is plain already: its snapshots may not be
        keys = tuple(found)
    elif any(is_encrypted(p) for p in _snapshot_paths(settings.home)):
        raise KeyUnavailable("encrypted snapshots are left and no key was found to decrypt "
                             f"them; looked in: {'; '.join(looked)}")
    else:
        keys = ()
    if not keys:
        return EncryptionReport(action="decrypt", path=str(live), encrypted=False,
                                key_place=None, snapshots=[])
    job = _Job("decrypt", encrypted_driver(keys, settings.sqlite_driver), None)
    converted = _run(settings, job, actor=actor)
    log.info("store_decrypted", path=str(live), snapshots=len(converted))
    return EncryptionReport(action="decrypt", path=str(live), encrypted=False,
                            key_place=keys[0].place, snapshots=converted)


def rekey(settings: Settings, *, key_in: KeyIn = "auto", actor: str = "python"
          ) -> EncryptionReport:
    """Re-encrypt the store and its snapshots under a new key, then retire the old one."""
    _require_sqlite(settings, "rekey")
    live = settings.db_path
    if not is_encrypted(live):
        raise InvalidInput(f"{live} is not encrypted: run 'aide-memoire encrypt' first")
    places = _places(settings)
    keys = driver_for(live, settings).keys  # every key found, the one opening it first
    pending = next((k for k in keys if k.pending), None)
    held = places.held_in()
    keeper = held if held is not None and key_in == "auto" else places.keeper(key_in)
    if pending is None:
        secret = new_key()
        place = places.keep(secret, keeper, pending=True)
        pending = StoreKey(secret, place, pending=True)
        keys = (*keys, pending)
    crash_point("rekey.pending_kept")
    job = _Job("rekey", encrypted_driver(keys, settings.sqlite_driver), pending)
    converted = _run(settings, job, actor=actor)
    kept = places.keep(pending.secret, keeper, pending=False)
    crash_point("rekey.promoted")
    places.drop_pending()
    log.info("store_rekeyed", path=str(live), key=kept, snapshots=len(converted))
    note = None
    if settings.encryption_key is not None:
        note = ("AIDE_MEMOIRE_ENCRYPTION_KEY still holds the old key: unset it (the new key "
                f"is in {kept})")
    return EncryptionReport(action="rekey", path=str(live), encrypted=True, key_place=kept,
                            snapshots=converted, note=note)
