"""Real deletion: choosing what to forget, and leaving no copy of its text in the file.

Deleting a row is not enough for SQLite. Three places keep old text:

- freed cells and pages of the main file: ``PRAGMA secure_delete = ON`` (set on every
  connection) overwrites them with zeros as rows are deleted or rewritten;
- the FTS5 index: a contentless table keeps a deleted row's terms in its segments
  (only a tombstone marks them) until the segments are merged; ``optimize`` merges;
- the WAL: earlier page images stay there until a checkpoint copies them back;
  ``wal_checkpoint(TRUNCATE)`` then empties the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...logs import get_logger
from ..store import RowFilter, Store
from ..text import query_terms

__all__ = ["match_all", "purge", "select_for_forget"]

log = get_logger(__name__)

ALL_STATUSES = ("active", "quarantined", "superseded", "archived")


def match_all(query: str) -> str | None:
    """An FTS5 expression requiring every content word of ``query`` (quoted, no syntax)."""
    terms = query_terms(query)
    if not terms:
        return None
    return " AND ".join('"' + term.replace('"', '""') + '"' for term in terms)


def select_for_forget(
    conn: Any,
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
        clause, params = where.sql("m")
        rowids = [
            int(r[0])
            for r in conn.execute(
                f"SELECT m.rowid FROM memories m WHERE {clause} ORDER BY m.rowid LIMIT ?",
                [*params, limit],
            )
        ]
    records = store.records(conn, rowids)
    return [(rowid, records[rowid].id) for rowid in rowids if rowid in records]


def purge(db: Any) -> bool:
    """After deletes: merge FTS5 segments, then checkpoint and truncate the WAL.

    Returns False when another connection's open read kept the WAL from being emptied
    (its pages are overwritten at the next checkpoint instead).
    """
    with db.write() as tx:
        # 'optimize' rewrites the index as one segment, dropping tombstoned rows' terms.
        tx.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')")
    busy, _, _ = db.conn().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        log.warning("forget_checkpoint_busy", detail="a reader kept the WAL; retried later")
        return False
    return True
