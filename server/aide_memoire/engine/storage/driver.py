"""The one place that chooses the SQLite driver.

The interpreter's ``sqlite3`` is often built without extension loading, and sqlite-vec
is an extension. We prefer drivers that bundle a recent SQLite and can load it:

1. ``sqlean`` (PyPI ``sqlean.py``: wheels for Linux and macOS, the sqlite3 API),
2. ``pysqlite3`` (PyPI ``pysqlite3-binary``: Linux wheels),
3. the standard ``sqlite3`` (on Windows it usually can load extensions).

``AIDE_MEMOIRE_SQLITE_DRIVER`` (read by the settings, passed here) forces one of them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..core.errors import (
    AideMemoireError,
    ForeignDatabase,
    StoreBusy,
    StoreConflict,
    StoreError,
    StoreFull,
)

__all__ = [
    "SQLITE_BUSY", "SQLITE_LOCKED", "Driver", "load_driver", "primary_code", "translate_error",
]

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
        return self.module.connect(path, **kwargs)


def _probe(module: ModuleType) -> bool:
    conn = module.connect(":memory:")
    try:
        return hasattr(conn, "enable_load_extension")
    finally:
        conn.close()


def load_driver(preferred: str | None = None) -> Driver:
    """Return the first usable driver, or the one named by ``preferred``."""
    names: tuple[str, ...] = _CANDIDATES
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
