"""Schema of migration 3: findings (personal data and flags), the review queue, the audit log.

None of these tables holds memory text: findings and evidence are kinds and character
spans, audit events carry content hashes. Forgetting a memory therefore only has to
clean the memory row and its indexes.
"""

from __future__ import annotations

import math

from ..storage.protocol import Connection

__all__ = ["MIGRATION_NAME", "MIGRATION_VERSION", "apply"]

MIGRATION_VERSION = 3
MIGRATION_NAME = "trust: review queue, audit log, pii"

_SQL = """
CREATE TABLE memory_findings (
    memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    category TEXT NOT NULL CHECK (category IN ('pii', 'injection')),
    rule TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    confidence TEXT NOT NULL,
    field TEXT NOT NULL DEFAULT 'content'
);
CREATE INDEX memory_findings_memory ON memory_findings (memory_id);
CREATE TABLE review_items (
    id TEXT PRIMARY KEY,
    namespace TEXT NOT NULL,
    kind TEXT NOT NULL,
    memory_id TEXT,
    evidence TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
    created_at TEXT NOT NULL,
    expires_at TEXT,
    decided_at TEXT,
    decided_by TEXT,
    note TEXT
);
CREATE INDEX review_items_pending ON review_items (status, namespace, created_at);
CREATE INDEX review_items_memory ON review_items (memory_id);
CREATE TABLE audit_events (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    namespace TEXT,
    memory_id TEXT,
    content_hash TEXT,
    detail TEXT NOT NULL DEFAULT '{}',
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX audit_events_memory ON audit_events (memory_id);
CREATE TABLE audit_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL
);
CREATE TABLE namespace_sizes (
    namespace TEXT PRIMARY KEY,
    count INTEGER NOT NULL,
    sum_log REAL NOT NULL,
    sum_log_sq REAL NOT NULL
)
"""


def apply(conn: Connection) -> None:
    """Create the trust tables, then size statistics for namespaces that already hold rows."""
    for statement in _SQL.split(";\n"):
        if statement.strip():
            conn.execute(statement)
    # In Python: SQL math functions are not in every SQLite build.
    sizes: dict[str, list[float]] = {}
    for namespace, length in conn.execute("SELECT namespace, length(content) FROM memories"):
        log_length = math.log(max(int(length), 1))
        stats = sizes.setdefault(str(namespace), [0, 0.0, 0.0])
        stats[0] += 1
        stats[1] += log_length
        stats[2] += log_length * log_length
    conn.executemany(
        "INSERT INTO namespace_sizes (namespace, count, sum_log, sum_log_sq) VALUES (?, ?, ?, ?)",
        [(ns, int(n), total, squares) for ns, (n, total, squares) in sizes.items()],
    )


INTEGRITY_VERSION = 12
INTEGRITY_NAME = "integrity: owed purges, audited fields"
# The same table on PostgreSQL (storage/postgres/schema.py step 12). IF NOT EXISTS: a
# store whose recorded version was set back (a test replays steps on real rows) reruns it.
PURGE_OWED_SQL = """
CREATE TABLE IF NOT EXISTS purge_owed (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    stage TEXT NOT NULL CHECK (stage IN ('deleted', 'merged')),
    reason TEXT NOT NULL DEFAULT ''
)
"""


def apply_integrity(tx: Connection) -> None:
    """Step 12: the table of owed purges (forget.py), and one ``memory.fields`` event
    sealing every existing memory's audited fields (seal.py), appended to the chain
    like any event so that an existing log still verifies."""
    from .audit import seal_all

    tx.execute(PURGE_OWED_SQL)
    seal_all(tx, actor="migration")
