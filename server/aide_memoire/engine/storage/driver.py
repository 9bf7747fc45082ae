"""The one place that chooses the SQLite driver.

The interpreter's ``sqlite3`` is often built without extension loading, and sqlite-vec
is an extension. We prefer drivers that bundle a recent SQLite and can load it:

1. ``sqlean`` (PyPI ``sqlean.py``: wheels for Linux and macOS, the sqlite3 API),
2. ``pysqlite3`` (PyPI ``pysqlite3-binary``: Linux wheels),
3. the standard ``sqlite3`` (on Windows it usually can load extensions).

``AIDE_MEMOIRE_SQLITE_DRIVER`` (read by the settings, passed here) forces one of them.

An encrypted store (its file does not start with SQLite's header) is opened with
``sqlcipher3`` (the ``encryption`` extra: SQLCipher, the SQLite API) and its key
(``keys.py``); :func:`driver_for` decides from the file, and every connection the
driver makes is keyed before its first statement.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ..core import parts
from ..core.errors import (
    AideMemoireError,
    ForeignDatabase,
    InvalidInput,
    KeyUnavailable,
    StoreBusy,
    StoreConflict,
    StoreError,
    StoreFull,
)
from ..core.settings import Settings
from .keys import KeyPlaces, StoreKey

__all__ = [
    "SQLITE_BUSY", "SQLITE_HEADER", "SQLITE_LOCKED", "Driver", "driver_for", "is_encrypted",
    "load_driver", "primary_code", "translate_error",
]

SQLITE_HEADER = b"SQLite format 3\x00"
ENCRYPTED_DRIVER = "sqlcipher3"

_CANDIDATES = ("sqlean", "pysqlite3.dbapi2", "sqlite3")
# FTS5 contentless_delete (3.43) lets forget remove a row's terms from the keyword index.
MIN_SQLITE = (3, 43, 0)
_ALIASES = {"sqlean": "sqlean", "pysqlite3": "pysqlite3.dbapi2", "sqlite3": "sqlite3"}


@dataclass(frozen=True)
class Driver:
    """A DB-API module for SQLite and what it can do."""

    name: str
    module: ModuleType
    sqlite_version: str
    can_load_extensions: bool
    # An encrypted store's keys, the one that opens it first (a new file gets that one);
    # the rest open files a rotation cut short left under its other key. Empty: plain.
    keys: tuple[StoreKey, ...] = ()

    @property
    def encrypted(self) -> bool:
        return bool(self.keys)

    @property
    def cipher_version(self) -> str | None:
        """SQLCipher's version, for status (None for a plain driver)."""
        if not self.keys:
            return None
        conn = self.module.connect(":memory:")
        try:
            return str(conn.execute("PRAGMA cipher_version").fetchone()[0])
        finally:
            conn.close()

    @property
    def Error(self) -> type[Exception]:  # noqa: N802 - mirrors the DB-API name
        error: type[Exception] = self.module.Error
        return error

    @property
    def OperationalError(self) -> type[Exception]:  # noqa: N802
        error: type[Exception] = self.module.OperationalError
        return error

    @property
    def DatabaseError(self) -> type[Exception]:  # noqa: N802
        error: type[Exception] = self.module.DatabaseError
        return error

    @property
    def IntegrityError(self) -> type[Exception]:  # noqa: N802
        error: type[Exception] = self.module.IntegrityError
        return error

    def connect(self, path: str, **kwargs: Any) -> Any:
        """A connection to ``path``; keyed, for an encrypted store, with the first of its
        keys that opens the file (a new, empty file takes the first)."""
        if not self.keys or path == ":memory:":
            return self.module.connect(path, **kwargs)
        for key in self.keys:
            conn = self.module.connect(path, **kwargs)
            if key_opens(conn, key):
                return conn
            conn.close()
        raise KeyUnavailable(
            f"{_file_of(path)} does not open with the key of this store ("
            + "; ".join(k.place for k in self.keys) + "): it is encrypted with another key, "
            "or damaged. It was left untouched"
        )

    def with_keys(self, keys: tuple[StoreKey, ...]) -> Driver:
        return Driver(self.name, self.module, self.sqlite_version, self.can_load_extensions,
                      keys)


def key_opens(conn: Any, key: StoreKey) -> bool:
    """Key a fresh connection; True when the key reads the file (or the file is new)."""
    # SQLCipher prints each failed page check to stderr; a wrong key tried first (the
    # environment's, before the key file's) is expected here, not an error to show.
    conn.execute("PRAGMA cipher_log_level = NONE")
    conn.execute(f"PRAGMA key = {key.pragma()}")
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except conn.DatabaseError:  # "file is not a database": this key does not decrypt it
        return False
    return True


def _file_of(path: str) -> str:
    """The file named by a path or a ``file:`` URI (for messages)."""
    if path.startswith("file:"):
        return path[5:].split("?", 1)[0].removeprefix("//")
    return path


def _probe(module: ModuleType) -> bool:
    conn = module.connect(":memory:")
    try:
        return hasattr(conn, "enable_load_extension")
    finally:
        conn.close()


def is_encrypted(path: Path) -> bool:
    """True when the file exists, is not empty and does not start with SQLite's header:
    an SQLCipher file starts with its random salt (or the file is not a database)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except (FileNotFoundError, IsADirectoryError):
        return False
    return bool(head) and head != SQLITE_HEADER


def _encrypted_driver(preferred: str | None) -> Driver:
    if preferred and preferred != ENCRYPTED_DRIVER:
        raise InvalidInput(
            f"AIDE_MEMOIRE_SQLITE_DRIVER={preferred} cannot open an encrypted store; unset it "
            f"(an encrypted store is always opened with {ENCRYPTED_DRIVER})"
        )
    parts.require("encryption")
    module = importlib.import_module(ENCRYPTED_DRIVER)
    return Driver(ENCRYPTED_DRIVER, module, str(module.sqlite_version), _probe(module))


def encrypted_driver(keys: tuple[StoreKey, ...], preferred: str | None = None) -> Driver:
    """The SQLCipher driver with these keys (for a store being encrypted or rekeyed)."""
    return _encrypted_driver(preferred).with_keys(keys)


def driver_for(path: Path, settings: Settings, *, home: Path | None = None) -> Driver:
    """The driver that opens the store file at ``path`` (of ``home``, the settings' home by
    default): the chosen plain driver, or SQLCipher with the key that opens the file.

    A missing or wrong key raises :class:`KeyUnavailable` naming every place looked at;
    nothing is written to the file (the probe reads its first page).
    """
    if not is_encrypted(path):
        return load_driver(settings.sqlite_driver)
    if not parts.available("encryption"):
        raise ForeignDatabase(
            f"{path} is not a SQLite database (or its header is damaged), or it is an "
            f"encrypted store, which needs {parts.PARTS['encryption'].install}; it was left "
            "untouched"
        )
    driver = _encrypted_driver(settings.sqlite_driver)
    places = KeyPlaces.for_home(settings, home)
    found, looked = places.candidates()
    if not found:
        raise KeyUnavailable(
            f"{path} is not a SQLite database, or it is an encrypted store whose key was not "
            f"found; looked in: {'; '.join(looked)}. Give the key with "
            "AIDE_MEMOIRE_ENCRYPTION_KEY or AIDE_MEMOIRE_ENCRYPTION_KEY_FILE (docs/trust.md, "
            "'Encryption at rest'). The file was left untouched"
        )
    uri = f"{path.resolve().as_uri()}?mode=ro"
    for key in found:
        conn = driver.module.connect(uri, uri=True)
        try:
            if key_opens(conn, key):
                rest = tuple(k for k in found if k is not key)
                return driver.with_keys((key, *rest))
        finally:
            conn.close()
    raise KeyUnavailable(
        f"{path} is encrypted and none of the keys found opens it (a wrong key, the key of "
        f"another store, or a damaged file); looked in: {'; '.join(looked)}. Give its key "
        "with AIDE_MEMOIRE_ENCRYPTION_KEY or AIDE_MEMOIRE_ENCRYPTION_KEY_FILE. The file was "
        "left untouched"
    )


def load_driver(preferred: str | None = None) -> Driver:
    """Return the first usable driver, or the one named by ``preferred``."""
    names: tuple[str, ...] = _CANDIDATES
    if preferred == ENCRYPTED_DRIVER:
        return _encrypted_driver(preferred)
    if preferred:
        if preferred not in _ALIASES:
            raise ValueError(
                f"unknown SQLite driver {preferred!r}; choose one of {sorted(_ALIASES)}"
            )
        names = (_ALIASES[preferred],)
    problems: list[str] = []
    for name in names:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            problems.append(f"{name}: {exc}")
            continue
        version = tuple(int(p) for p in str(module.sqlite_version).split(".")[:3])
        if version < MIN_SQLITE:
            problems.append(
                f"{name} has SQLite {module.sqlite_version}, older than "
                f"{'.'.join(map(str, MIN_SQLITE))}"
            )
            continue
        return Driver(
            name=name.split(".")[0],
            module=module,
            sqlite_version=str(module.sqlite_version),
            can_load_extensions=_probe(module),
        )
    raise StoreError(
        "no usable SQLite driver: " + "; ".join(problems) + ". Install 'sqlean.py' "
        "(or 'pysqlite3-binary' on Linux), which bundle a recent SQLite"
    )


# -- errors ------------------------------------------------------------------------------
# Every driver above (and sqlcipher3) sets ``sqlite_errorcode`` on its errors: the
# extended result code, whose low byte is the primary code (SQLITE_FULL, SQLITE_BUSY...).
# Errors are mapped by it, never by their message: codes are SQLite's contract, messages
# are not (storage/postgres/errors.py does the same with SQLSTATE).

# Primary result codes (sqlite3.h).
SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR = 5, 6, 8, 10
SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CONSTRAINT, SQLITE_NOTADB = 11, 13, 19, 26


def primary_code(exc: BaseException) -> int | None:
    """The primary result code of a driver error, None when it carries none (an error the
    driver raised itself, e.g. on a closed connection)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def translate_error(
    exc: BaseException, *, where: str, error: type[Exception], integrity: type[Exception],
    busy_timeout_ms: int, writing: bool = True,
) -> BaseException:
    """Our error for a driver error (``error`` is the driver's base class, ``integrity``
    its IntegrityError); an error already ours passes through. A read's error says so:
    "nothing was written" is a write's reassurance, not a read's."""
    if isinstance(exc, AideMemoireError) or not isinstance(exc, error):
        return exc
    code = primary_code(exc)
    after = "nothing was written" if writing else "it could not be read; nothing stored changed"
    if code in (SQLITE_FULL, SQLITE_IOERR):
        room = "" if writing else " (a read needs room for temporary data too)"
        return StoreFull(
            f"the store at {where} is full{room} ({exc}); {after}. Free disk "
            "space or raise max_db_pages"
        )
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        held = "write lock" if writing else "lock"
        return StoreBusy(
            f"another process held the store's {held} for more than "
            f"{busy_timeout_ms} ms; {after}. Try again"
        )
    if code in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return ForeignDatabase(
            f"the store at {where} is corrupt ({exc}). Run 'aide-memoire doctor', "
            "or restore a snapshot"
        )
    if code == SQLITE_CONSTRAINT or isinstance(exc, integrity):
        return StoreConflict(
            f"the write conflicts with a row already stored ({exc}); nothing was written. "
            "Try again: another process may have written the same thing"
        )
    if code == SQLITE_READONLY:
        return StoreError(
            f"the store at {where} is read-only ({exc}); {after}. Check the "
            "file's permissions"
        )
    return StoreError(f"the store at {where} failed: {exc}; {after}")
