"""Real deletion: choosing what to forget, and leaving no copy of its text in the file.

Deleting a row is not enough for SQLite. Three places keep old text:

- freed cells and pages of the main file: ``PRAGMA secure_delete = ON`` (set on every
  connection) overwrites them with zeros as rows are deleted or rewritten;
- the FTS5 index: a contentless table keeps a deleted row's terms in its segments
  (only a tombstone marks them) until the segments are merged; ``optimize`` merges;
- the WAL: earlier page images stay there until a checkpoint copies them back;
  ``wal_checkpoint(TRUNCATE)`` then empties the file.

A checkpoint cannot finish while another connection reads an older snapshot (a long
recall, an open transaction in another process): old page images stay in the WAL, and
the main file keeps the old page. Then a durable marker, ``<store>.purge-pending``,
records that a purge is owed, and the checkpoint is retried (without waiting) after
every later commit, when a store is opened and when it is closed, until it completes
and the marker is removed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from ...logs import get_logger
from ..core.text import query_terms
from ..storage.db import Database
from ..storage.protocol import Connection
from ..storage.repositories import KeywordIndex
from ..storage.store import RowFilter, Store

__all__ = ["match_all", "purge", "select_for_forget"]

log = get_logger(__name__)

ALL_STATUSES = ("active", "quarantined", "superseded", "archived")
_WAIT_MS = 1000


def match_all(query: str) -> str | None:
    """An FTS5 expression requiring every content word of ``query`` (quoted, no syntax)."""
    terms = query_terms(query)
    if not terms:
        return None
    return " AND ".join('"' + term.replace('"', '""') + '"' for term in terms)


def select_for_forget(
    conn: Connection,
    store: Store,
    namespace: str,
    *,
    tag: str | None,
    query: str | None,
    limit: int,
    only_id: str | None = None,
) -> list[tuple[int, str]]:
    """(rowid, id) of every memory in ``namespace`` with ``tag`` and matching all of ``query``."""
    where = RowFilter(namespaces=[namespace], tags=[tag] if tag else None, statuses=ALL_STATUSES)
    if only_id is not None:
        rowid = store.rowid_of(conn, only_id, namespace)
        return [] if rowid is None else [(rowid, only_id)]
    if query is not None:
        match = match_all(query)
        if match is None:
            return []
        ranked: Iterable[tuple[int, float]] = store.keyword_search(
            conn, match, where, limit, [1.0, 0.0, 0.0, 0.0, 0.0]
        )
        rowids = [rowid for rowid, _ in ranked]
    else:
        rowids = store.rowids(conn, where, limit)
    records = store.records(conn, rowids)
    return [(rowid, records[rowid].id) for rowid in rowids if rowid in records]


def pending_marker(db: Database) -> Path:
    return Path(db.path).with_name(Path(db.path).name + ".purge-pending")


def _checkpoint(db: Database, *, wait: bool) -> bool:
    """Checkpoint and truncate the WAL; mark or clear the pending purge. True if done."""
    # The checkpoint waits for readers to finish. A forget waits a moment for a short
    # recall; a retry never waits. Past that the purge is owed, not blocking.
    busy = not db.checkpoint(wait_ms=min(int(db.busy_timeout_ms), _WAIT_MS) if wait else 0)
    marker = pending_marker(db)
    if busy:
        if not marker.exists():
            os.close(os.open(marker, os.O_CREAT | os.O_WRONLY, 0o600))
        return False
    with contextlib.suppress(FileNotFoundError):
        marker.unlink()
    return True


def purge(db: Database, keywords: KeywordIndex) -> bool:
    """After deletes: merge FTS5 segments, then checkpoint and truncate the WAL.

    Returns False when another connection's open read kept the WAL from being emptied;
    the purge is then owed (see :func:`retry_pending`).
    """
    with db.write() as tx:
        # Rewrites the index as one segment, dropping tombstoned rows' terms.
        keywords.optimize(tx)
    if _checkpoint(db, wait=True):
        return True
    log.warning("forget_checkpoint_busy", detail="a reader kept the WAL; retried later")
    return False


def retry_pending(db: Database) -> bool:
    """Finish an owed purge if one is recorded; True when none is owed any more."""
    # Called after every commit: one stat of a plain string path, no Path objects.
    if db.closed or not os.path.exists(f"{db.path}.purge-pending"):
        return True
    done = _checkpoint(db, wait=False)
    if done:
        log.info("forget_purge_completed", path=str(db.path))
    return done
