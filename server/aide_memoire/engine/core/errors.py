"""The one exception tree of aide-memoire.

::

    AideMemoireError
    ├── InvalidInput            the caller's arguments are wrong; the message says which and how
    │   ├── InvalidNamespace
    │   ├── InvalidContent      empty, too large, not valid UTF-8
    │   ├── InvalidQuery
    │   └── SecretRefused       the text holds a secret (key, token, password): never stored
    ├── NotFound                no memory with that id in that namespace
    ├── StoreError              the database file cannot be used as it is
    │   ├── ForeignDatabase     not an aide-memoire store (or corrupt): left untouched
    │   │   └── KeyUnavailable  an encrypted store whose key is missing or wrong: left untouched
    │   ├── NewerSchema         written by a newer aide-memoire: left untouched
    │   ├── StoreFull           the disk or the configured size limit is reached
    │   ├── StoreBusy           another process held the write lock past the busy timeout
    │   ├── StoreConflict       a write met a row another writer stored first (a constraint)
    │   └── MaintenanceBusy     another maintenance runner holds the namespace's lease
    ├── ModelUnavailable        a configured model is not present locally
    └── PartMissing             an optional part's extra is not installed (engine/core/parts.py)

Every message names the problem and what to do next. Edges (CLI, MCP) map these to
their own error kinds; they never parse message text.
"""

from __future__ import annotations

__all__ = [
    "AideMemoireError",
    "ForeignDatabase",
    "InvalidContent",
    "InvalidInput",
    "InvalidNamespace",
    "InvalidQuery",
    "KeyUnavailable",
    "MaintenanceBusy",
    "ModelUnavailable",
    "NewerSchema",
    "NotFound",
    "PartMissing",
    "SecretRefused",
    "StoreBusy",
    "StoreConflict",
    "StoreError",
    "StoreFull",
]


class AideMemoireError(Exception):
    """Base of every error aide-memoire raises on purpose."""


class InvalidInput(AideMemoireError, ValueError):
    """The caller's arguments are wrong."""


class InvalidNamespace(InvalidInput):
    """A namespace name outside the allowed alphabet or length."""


class InvalidContent(InvalidInput):
    """Memory content that is empty, too large, or not valid text."""


class InvalidQuery(InvalidInput):
    """A recall query that cannot be searched."""


class SecretRefused(InvalidInput):
    """A write refused because its text holds a secret; says which kind and where, never what."""

    def __init__(
        self, message: str, *, kind: str, label: str, field: str, offset: int
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.label = label
        self.field = field
        self.offset = offset


class NotFound(AideMemoireError, LookupError):
    """No memory with that id in that namespace."""


class StoreError(AideMemoireError):
    """The database file cannot be used as it is."""


class ForeignDatabase(StoreError):
    """The file is not an aide-memoire store, or is corrupt."""


class NewerSchema(StoreError):
    """The store was written by a newer version of aide-memoire."""


class StoreFull(StoreError):
    """The disk, or the configured size limit, is full."""


class StoreBusy(StoreError):
    """Another process held the store's write lock longer than the busy timeout."""


class StoreConflict(StoreError):
    """A write broke a uniqueness or reference constraint (often a concurrent writer)."""


class KeyUnavailable(ForeignDatabase):
    """The store is encrypted and no key found opens it (missing, wrong, or another store's);
    the message names every place the key was looked for, never a key."""


class MaintenanceBusy(StoreError):
    """Another maintenance runner is working the namespace (it holds the lease)."""


class ModelUnavailable(AideMemoireError):
    """A configured model is not present on this machine."""


class PartMissing(AideMemoireError):
    """An optional part (code index, vectors, ...) is not installed; names its extra."""

    def __init__(self, message: str, *, part: str, extra: str) -> None:
        super().__init__(message)
        self.part = part
        self.extra = extra
