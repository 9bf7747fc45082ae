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
the main file keeps the old page. And a process can die between the delete's commit
and the purge. So the debt is recorded in the file, in the deleting transaction
(``purge_owed``, migration 12), with the stage the purge reached (``deleted``, then
``merged`` once the index is rewritten); it is cleared only after the checkpoint emptied
the WAL. A purge still owed is finished (without waiting for readers) after every later
commit, when a store is opened and when it is closed, by ``doctor --repair`` and by
maintenance; ``doctor`` reports it until then.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...logs import get_logger
from ..core import clock
from ..core.crashpoints import crash_point
from ..core.text import query_terms
from ..storage.protocol import Connection, Database
from ..storage.repositories import KeywordIndex, MemoryRows
from ..storage.store import RowFilter

__all__ = ["PurgeOwed", "match_all", "owe_purge", "owed", "purge", "retry_pending",
           "select_for_forget"]

log = get_logger(__name__)

ALL_STATUSES = ("active", "quarantined", "superseded", "archived")
_WAIT_MS = 1000
_busy = threading.local()  # set while this thread purges: its own commits must not recurse


@dataclass(frozen=True)
class PurgeOwed:
    """A purge a forget still owes: the text may remain in the file until it is done."""

    since: str
    forgets: int
    merge_due: bool


def match_all(query: str) -> str | None:
    """An FTS5 expression requiring every content word of ``query`` (quoted, no syntax)."""
    terms = query_terms(query)
    if not terms:
        return None
    return " AND ".join('"' + term.replace('"', '""') + '"' for term in terms)


def select_for_forget(
    conn: Connection,
    store: MemoryRows,
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
    """The marker file of stores written before migration 12 (still honoured, then
    removed): the owed purge now lives in ``purge_owed``, inside the file."""
    return db.local_state.with_name(db.local_state.name + ".purge-pending")


def owe_purge(tx: Connection, reason: str) -> None:
    """Record, in the deleting transaction itself, that a purge is owed: a crash between
    the delete's commit and the purge cannot lose the debt (finished at the next open)."""
    tx.execute(
        "INSERT INTO purge_owed (at, stage, reason) VALUES (?, 'deleted', ?)",
        (clock.format_time(clock.now()), reason[:200]),
    )


def owed(conn: Connection) -> PurgeOwed | None:
    """The owed purge, if any: since when, and whether the index merge is still to do."""
    row = conn.execute(
        "SELECT min(at), count(*), sum(CASE WHEN stage = 'deleted' THEN 1 ELSE 0 END) "
        "FROM purge_owed"
    ).fetchone()
    if row is None or not row[1]:
        return None
    return PurgeOwed(since=str(row[0]), forgets=int(row[1]), merge_due=bool(row[2]))


def _checkpoint(db: Database, *, wait: bool) -> bool:
    """Checkpoint and truncate the WAL. True if done."""
    # The checkpoint waits for readers to finish. A forget waits a moment for a short
    # recall; a retry never waits. Past that the purge is owed, not blocking.
    return db.purge_deleted(wait_ms=min(int(db.busy_timeout_ms), _WAIT_MS) if wait else 0)


def purge(db: Database, keywords: KeywordIndex, *, wait: bool = True) -> bool:
    """Finish every owed purge: merge FTS5 segments, then checkpoint and truncate the WAL,
    then clear the debt. Each stage is committed before the next, so a kill anywhere
    leaves the debt recorded at the stage it reached (``crash_point`` names them).

    Returns False when another connection's open read kept the WAL from being emptied;
    the purge stays owed and is retried after later commits, at open and close, by
    ``doctor --repair`` and by maintenance.
    """
    if getattr(_busy, "active", False):
        return False  # a commit hook inside our own purge: the outer call finishes it
    _busy.active = True
    try:
        return _purge(db, keywords, wait=wait)
    finally:
        _busy.active = False


def _purge(db: Database, keywords: KeywordIndex, *, wait: bool) -> bool:
    crash_point("forget.deleted")
    with db.write() as tx:
        top = tx.execute("SELECT max(id) FROM purge_owed").fetchone()[0]
        if top is None and not _legacy_marker(db):
            return True
        if top is not None and tx.execute(
            "SELECT 1 FROM purge_owed WHERE stage = 'deleted' LIMIT 1").fetchone():
            # Rewrites the index as one segment, dropping tombstoned rows' terms; its
            # cost grows with the index, so it runs once however many forgets are owed.
            keywords.optimize(tx)
            tx.execute("UPDATE purge_owed SET stage = 'merged' WHERE id <= ?", (top,))
    crash_point("forget.merged")
    if not _checkpoint(db, wait=wait):
        log.warning("forget_checkpoint_busy", detail="a reader kept the WAL; retried later")
        return False
    crash_point("forget.checkpointed")
    with db.write() as tx:
        if top is not None:
            tx.execute("DELETE FROM purge_owed WHERE id <= ?", (top,))
    # Clearing the debt wrote one small page of purge_owed to the WAL: empty it too.
    _checkpoint(db, wait=False)
    with contextlib.suppress(FileNotFoundError):
        pending_marker(db).unlink()
    return True


def _legacy_marker(db: Database) -> bool:
    return pending_marker(db).exists()


def retry_pending(db: Database, keywords: KeywordIndex) -> bool:
    """Finish an owed purge if one is recorded; True when none is owed any more."""
    # Called after every commit: one indexed probe of an (almost always) empty table.
    if db.closed or getattr(_busy, "active", False):
        return True
    if db.in_transaction():
        return False
    conn = db.conn()
    if conn.execute("SELECT 1 FROM purge_owed LIMIT 1").fetchone() is None and not (
            _legacy_marker(db)):
        return True
    done = purge(db, keywords, wait=False)
    if done:
        log.info("forget_purge_completed", store=str(db.local_state))
    return done
