"""Schema step 11's backfill: every stored memory's keyword document, in FTS5's postings.

The documents before step 11 were ``tsvector``\\ s of PostgreSQL's own stems, from which
FTS5's tokens cannot be recovered: they are composed again from the rows, as the write
path composes them (engine/core/compose.py), a session's turns with their neighbours.
"""

from __future__ import annotations

from ...core.compose import fts_document
from ..protocol import Connection
from ..rows import indexed
from .memories import PostgresMemoryRows

__all__ = ["backfill_keywords"]

_BATCH = 500


def backfill_keywords(tx: Connection) -> int:
    """Index every memory in ``tx`` (the migrating transaction); the rows indexed."""
    rows = PostgresMemoryRows()
    rowids = [int(r) for (r,) in tx.execute("SELECT rowid FROM memories ORDER BY rowid")]
    sessions: dict[tuple[str, str], list[int]] = {}
    for start in range(0, len(rowids), _BATCH):
        for rowid, record in rows.records(tx, rowids[start : start + _BATCH]).items():
            if record.session_id is not None and record.position is not None:
                key = (record.namespace, record.session_id)
                sessions.setdefault(key, []).append(record.position)
            else:
                rows.keywords.add(tx, rowid, fts_document(indexed(record)))
    for (namespace, session_id), positions in sessions.items():
        rows.index_turns(tx, namespace, session_id, positions)
    return len(rowids)
