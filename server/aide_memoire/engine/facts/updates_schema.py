"""Migration 8: the general supersession path's index terms and its update links.

``memory_terms`` holds each memory's aspect and name terms (a few per memory), so that a
new memory finds older ones about the same thing with indexed lookups instead of a scan.
``memory_updates`` records every link the path made or proposed, with its confidence and
signals, so that a proposal is made once and a memory can say what updated it and how
sure the store was. Both follow their memories on delete and on edit.
"""

from __future__ import annotations

from ..storage.protocol import Connection
from .schema import _statements

__all__ = ["MIGRATION_NAME", "apply"]

MIGRATION_NAME = "general supersession terms and update links"

_SQL = """
CREATE TABLE memory_terms (
    namespace TEXT NOT NULL,
    term TEXT NOT NULL,
    memory_rowid INTEGER NOT NULL,
    PRIMARY KEY (namespace, term, memory_rowid)
) WITHOUT ROWID;
CREATE INDEX memory_terms_rowid ON memory_terms (memory_rowid);
CREATE TABLE memory_updates (
    namespace TEXT NOT NULL,
    old_id TEXT NOT NULL,
    new_id TEXT NOT NULL,
    confidence REAL NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('applied', 'proposed', 'rejected')),
    signals TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (namespace, old_id, new_id)
) WITHOUT ROWID;
CREATE INDEX memory_updates_new ON memory_updates (namespace, new_id);
CREATE TRIGGER memories_terms_on_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memory_terms WHERE memory_rowid = old.rowid;
    DELETE FROM memory_updates WHERE namespace = old.namespace
        AND (old_id = old.id OR new_id = old.id);
END;
CREATE TRIGGER memories_terms_on_edit AFTER UPDATE OF content ON memories
WHEN old.content IS NOT new.content BEGIN
    DELETE FROM memory_terms WHERE memory_rowid = old.rowid;
END
"""


def apply(conn: Connection) -> None:
    for statement in _statements(_SQL):
        conn.execute(statement)
