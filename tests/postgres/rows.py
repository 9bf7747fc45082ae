"""Rows written the way the engine writes them (qmark SQL through the adapter)."""

from __future__ import annotations

from collections.abc import Sequence

from aide_memoire.engine.core import clock
from aide_memoire.engine.storage.postgres import PgConnection, index_document
from aide_memoire.engine.storage.store import content_hash

_INSERT = (
    "INSERT INTO memories (id, namespace, kind, content, content_hash, created_at, "
    "updated_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def insert_memory(
    tx: PgConnection,
    namespace: str,
    content: str,
    *,
    kind: str = "note",
    status: str = "active",
    doc: Sequence[str] | None = None,
) -> int:
    """A memory and its keyword document (content only, unless ``doc`` is given)."""
    stamp = clock.format_time(clock.now())
    cursor = tx.execute(
        _INSERT,
        (clock.new_id(), namespace, kind, content, content_hash(content), stamp, stamp, status),
    )
    assert cursor.lastrowid is not None
    rowid = int(cursor.lastrowid)
    index_document(tx, rowid, namespace, doc or (content, "", "", "", "", "", ""))
    return rowid
