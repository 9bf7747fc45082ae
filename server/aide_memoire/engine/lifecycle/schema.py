"""Schema of migration 7: links between memories, feedback, maintenance runs and leases.

None of these tables holds memory text; a summary's text is itself a memory.
"""

from __future__ import annotations

__all__ = ["MIGRATION_NAME", "MIGRATION_VERSION", "SCHEMA_SQL"]

MIGRATION_VERSION = 7
MIGRATION_NAME = "lifecycle: links, feedback, maintenance runs and leases"

SCHEMA_SQL = """
CREATE TABLE memory_links (
    source_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    kind TEXT NOT NULL
        CHECK (kind IN ('near_duplicate', 'duplicate_of', 'merged_into', 'summarizes')),
    score REAL,
    namespace TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (source_id, target_id, kind)
);
CREATE INDEX memory_links_target ON memory_links (target_id, kind);
CREATE INDEX memory_links_ns_kind ON memory_links (namespace, kind);
CREATE TABLE memory_feedback (
    memory_id TEXT PRIMARY KEY,
    helpful INTEGER NOT NULL DEFAULT 0,
    unhelpful INTEGER NOT NULL DEFAULT 0,
    wrong INTEGER NOT NULL DEFAULT 0,
    last_at TEXT NOT NULL
);
CREATE TABLE maintenance_runs (
    id TEXT PRIMARY KEY,
    namespace TEXT NOT NULL,
    mode TEXT NOT NULL CHECK (mode IN ('apply', 'auto')),
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
    started_at TEXT NOT NULL,
    finished_at TEXT,
    actor TEXT NOT NULL,
    report TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX maintenance_runs_ns ON maintenance_runs (namespace, started_at);
CREATE TABLE maintenance_leases (
    namespace TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    acquired_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
)
"""

