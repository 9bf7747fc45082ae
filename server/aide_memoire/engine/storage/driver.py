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

from ..core.errors import StoreError

__all__ = ["Driver", "load_driver"]

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
