"""Migration 6: entities, their links to memories, facts with validity, the entity graph.

Facts and links follow their memory: triggers delete them when the memory is deleted
(``forget`` must leave no derived text behind) and drop a memory's facts when its text
is edited (they no longer describe it).
"""

from __future__ import annotations

from ..storage.protocol import Connection

__all__ = ["MIGRATION_NAME", "apply"]

MIGRATION_NAME = "facts and entities"

_SQL = """
CREATE TABLE entities (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    display TEXT NOT NULL,
    type TEXT NOT NULL DEFAULT 'name',
    mentions INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    UNIQUE (namespace, name)
);
CREATE TABLE memory_entities (
    memory_rowid INTEGER NOT NULL,
    entity_id INTEGER NOT NULL,
    source TEXT NOT NULL DEFAULT 'rule',
    PRIMARY KEY (memory_rowid, entity_id)
) WITHOUT ROWID;
CREATE INDEX memory_entities_entity ON memory_entities (entity_id, memory_rowid);
CREATE TABLE facts (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    subject TEXT NOT NULL,
    subject_text TEXT NOT NULL,
    predicate TEXT NOT NULL,
    object TEXT NOT NULL,
    object_text TEXT NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to TEXT,
    superseded_by INTEGER,
    ended_by TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX facts_slot ON facts (namespace, subject, predicate, valid_from);
CREATE INDEX facts_memory ON facts (memory_id);
CREATE TABLE entity_edges (
    namespace TEXT NOT NULL,
    a INTEGER NOT NULL,
    b INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('cooccur', 'similar')),
    weight REAL NOT NULL,
    used_at TEXT NOT NULL,
    PRIMARY KEY (a, b, kind)
) WITHOUT ROWID;
CREATE INDEX entity_edges_b ON entity_edges (b, a);
CREATE TRIGGER memories_facts_on_delete AFTER DELETE ON memories BEGIN
    DELETE FROM facts WHERE memory_id = old.id;
    UPDATE facts SET valid_to = NULL, superseded_by = NULL, ended_by = NULL
        WHERE ended_by = old.id;
    DELETE FROM entity_edges WHERE a IN (
        SELECT entity_id FROM memory_entities me WHERE me.memory_rowid = old.rowid
        AND NOT EXISTS (SELECT 1 FROM memory_entities o
                        WHERE o.entity_id = me.entity_id AND o.memory_rowid != old.rowid))
        OR b IN (
        SELECT entity_id FROM memory_entities me WHERE me.memory_rowid = old.rowid
        AND NOT EXISTS (SELECT 1 FROM memory_entities o
                        WHERE o.entity_id = me.entity_id AND o.memory_rowid != old.rowid));
    DELETE FROM entities WHERE id IN (
        SELECT entity_id FROM memory_entities me WHERE me.memory_rowid = old.rowid
        AND NOT EXISTS (SELECT 1 FROM memory_entities o
                        WHERE o.entity_id = me.entity_id AND o.memory_rowid != old.rowid));
    DELETE FROM memory_entities WHERE memory_rowid = old.rowid;
    UPDATE memories SET status = 'active', valid_to = NULL, superseded_by = NULL
        WHERE superseded_by = old.id AND namespace = old.namespace;
END;
CREATE TRIGGER memories_facts_on_edit AFTER UPDATE OF content ON memories
WHEN old.content IS NOT new.content BEGIN
    DELETE FROM facts WHERE memory_id = old.id;
    UPDATE facts SET valid_to = NULL, superseded_by = NULL, ended_by = NULL
        WHERE ended_by = old.id;
END
"""


def apply(conn: Connection) -> None:
    # Triggers hold ';' inside their bodies: split on the blank-line-free statement ends.
    for statement in _statements(_SQL):
        conn.execute(statement)


def _statements(sql: str) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for line in sql.strip().splitlines():
        current.append(line)
        stripped = line.strip()
        if stripped.startswith("CREATE TRIGGER"):
            depth = 1
        if depth and stripped.rstrip(";") == "END":
            depth = 0
            out.append("\n".join(current).rstrip(";"))
            current = []
        elif not depth and stripped.endswith(";"):
            out.append("\n".join(current).rstrip(";"))
            current = []
    if current and "".join(current).strip():
        out.append("\n".join(current).rstrip(";"))
    return out
