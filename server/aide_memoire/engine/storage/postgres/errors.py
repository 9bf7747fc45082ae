"""PostgreSQL errors mapped to the project's one tree (engine/core/errors.py), by SQLSTATE.

The server says what went wrong with a five-character code; the class (its first two
characters) is enough for most, a few codes need their own message. Message text is
never parsed: codes are stable across versions and locales, messages are not.
"""

from __future__ import annotations

import psycopg

from ...core.errors import (
    AideMemoireError,
    InvalidInput,
    StoreBusy,
    StoreConflict,
    StoreError,
    StoreFull,
)

__all__ = ["RETRYABLE", "is_retryable", "translate"]

# A writer that lost a race to another (serializable isolation, a deadlock): running the
# whole transaction again is the documented remedy, and nothing of it was committed.
RETRYABLE = frozenset({"40001", "40P01"})


def is_retryable(exc: BaseException | None) -> bool:
    return isinstance(exc, psycopg.Error) and exc.sqlstate in RETRYABLE


def translate(exc: BaseException, where: str) -> BaseException:
    """Our error for a driver error (``where`` names the database, without password)."""
    if isinstance(exc, AideMemoireError) or not isinstance(exc, psycopg.Error):
        return exc
    code = exc.sqlstate or ""
    detail = _first_line(exc)
    if code in RETRYABLE:
        return StoreBusy(
            f"another writer changed the same rows of {where} at the same time ({detail}); "
            "nothing was written. Try again"
        )
    if code in ("55P03", "57014"):  # lock_not_available, query_canceled (lock_timeout)
        return StoreBusy(
            f"another transaction held a lock on {where} past the lock timeout; nothing was "
            "written. Try again"
        )
    if code.startswith("23"):
        return StoreConflict(
            f"the write conflicts with a row already stored in {where} ({detail}); nothing "
            "was written. Try again: another process may have written the same thing"
        )
    if code.startswith("53"):  # disk_full, out_of_memory, too_many_connections
        return StoreFull(
            f"the server of {where} is out of a resource ({detail}); nothing was written. "
            "Free disk space or connections on the server"
        )
    if code == "42501":
        return StoreError(
            f"the database role may not do this in {where} ({detail}); nothing was written. "
            "A restricted namespace needs its role; tables need grant_store_access"
        )
    if code == "25006":
        return StoreError(
            f"{where} is read-only here ({detail}); nothing was written. Connect to the "
            "primary server, not a replica"
        )
    if code.startswith("22"):
        return InvalidInput(f"{where} refused a value ({detail}); nothing was written")
    if code.startswith(("08", "28", "3D")) or isinstance(exc, psycopg.OperationalError):
        return StoreError(
            f"cannot use {where} ({detail}). Check the server is running, the URL, the "
            "database name and the role's password"
        )
    return StoreError(f"{where} failed ({detail}); nothing was written")


def _first_line(exc: psycopg.Error) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
