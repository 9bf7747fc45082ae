"""Numbered, recorded schema steps. Append only: never edit a step that has shipped.

Each step runs inside the migrating transaction; ``PRAGMA user_version`` and the
``schema_migrations`` table both record the last step applied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..code import schema as code_schema
from ..code.schema import SCHEMA_SQL as CODE_SCHEMA_SQL
from ..code.schema import VECTORS_SQL as CODE_VECTORS_SQL
from ..facts import schema as facts_schema
from ..facts import updates_schema
from ..lifecycle import schema as lifecycle_schema
from ..trust import schema as trust_schema
from .protocol import Connection

__all__ = ["APPLICATION_ID", "MIGRATIONS", "SCHEMA_VERSION", "Migration"]

# 'AIME' as a 32-bit big-endian integer: marks the file as ours (PRAGMA application_id).
APPLICATION_ID = 0x41494D45

# FTS5 columns, in order. bm25() weights in retrieval follow this order.
FTS_COLUMNS = ("content", "speaker", "context", "after", "window", "tags", "dates")
# The keyword index's tokenizer (step 1); PostgreSQL's index tokenises with it too
# (storage/postgres/keyword_tokens.py), so the two backends' tokens cannot drift apart.
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    apply: Callable[[Any], None]


def _run(sql: str) -> Callable[[Any], None]:
    def apply(conn: Connection) -> None:
        for statement in sql.split(";\n"):
            if statement.strip():
                conn.execute(statement)

    return apply


_V1 = """
CREATE TABLE schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE memories (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    namespace TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('note', 'learning', 'turn', 'fact', 'summary')),
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    importance REAL NOT NULL DEFAULT 0.5,
    source TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    observed_at TEXT,
    valid_from TEXT,
    valid_to TEXT,
    superseded_by TEXT,
    status TEXT NOT NULL DEFAULT 'active'
        CHECK (status IN ('active', 'quarantined', 'superseded', 'archived')),
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    utility REAL NOT NULL DEFAULT 0.0,
    session_id TEXT,
    speaker TEXT,
    role TEXT,
    position INTEGER,
    reply_to TEXT,
    context TEXT
);
CREATE INDEX memories_ns_created ON memories (namespace, created_at);
CREATE INDEX memories_ns_hash ON memories (namespace, content_hash);
CREATE INDEX memories_ns_session ON memories (namespace, session_id, position);
CREATE INDEX memories_ns_speaker ON memories (namespace, speaker) WHERE speaker IS NOT NULL;
CREATE VIRTUAL TABLE memory_fts USING fts5(
    content, speaker, context, after, window, tags, dates,
    content='', contentless_delete=1,
    tokenize='""" + FTS_TOKENIZE + """'
)
"""

_V2 = """
CREATE TABLE vector_spaces (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    table_name TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE vector_state (
    space TEXT NOT NULL,
    namespace TEXT NOT NULL,
    max_rowid INTEGER NOT NULL DEFAULT 0,
    epoch INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (space, namespace)
)
"""

# The mirror's int8 blocks, tombstones and their state (storage/sqlite/vector_blocks.py).
_V13 = """
CREATE TABLE vector_blocks (
    space TEXT NOT NULL,
    namespace TEXT NOT NULL,
    seq INTEGER NOT NULL,
    rows INTEGER NOT NULL,
    rowids BLOB NOT NULL,
    scales BLOB NOT NULL,
    kinds BLOB NOT NULL,
    bits BLOB NOT NULL,
    vectors BLOB NOT NULL,
    PRIMARY KEY (space, namespace, seq)
);
CREATE TABLE vector_tombstones (
    space TEXT NOT NULL,
    namespace TEXT NOT NULL,
    row INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (space, namespace, row, seq)
) WITHOUT ROWID;
CREATE TABLE vector_block_state (
    space TEXT NOT NULL,
    namespace TEXT NOT NULL,
    status TEXT NOT NULL,
    max_rowid INTEGER NOT NULL,
    epoch INTEGER NOT NULL,
    built_to INTEGER NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (space, namespace)
)
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial store", _run(_V1)),
    Migration(2, "dense vector spaces", _run(_V2)),
    Migration(3, trust_schema.MIGRATION_NAME, trust_schema.apply),
    Migration(4, "code index", _run(CODE_SCHEMA_SQL)),
    Migration(5, "code vectors", _run(CODE_VECTORS_SQL)),
    Migration(6, facts_schema.MIGRATION_NAME, facts_schema.apply),
    Migration(7, lifecycle_schema.MIGRATION_NAME, _run(lifecycle_schema.SCHEMA_SQL)),
    Migration(8, updates_schema.MIGRATION_NAME, updates_schema.apply),
    # Counts per namespace and status (the web page's listing) without reading every row
    # (~0.2 s at 100k memories). Partial, so that no query about active rows (the
    # duplicate check above all) can be planned onto it instead of its own index.
    Migration(9, "namespace status index", _run(
        "CREATE INDEX memories_ns_status ON memories (namespace, status) "
        "WHERE status != 'active'")),
    # Steps 4 and 5 gave every store the code index's ~20 b-trees (one page each at
    # least), though most never index code: a store without a root loses them, and
    # engine/code/ makes them on its first write (issue #20, small stores stay small).
    Migration(10, code_schema.MIGRATION_NAME, code_schema.drop_if_unused),
    # PostgreSQL's keyword index becomes FTS5's postings, scored as FTS5's bm25
    # (storage/postgres/schema.py step 11); a SQLite store has them already in memory_fts.
    Migration(11, "keyword postings", _run("")),
    # Forget's purge owed inside the file (a crash cannot lose it), and the fields that
    # decide recall sealed in the audit chain (trust/forget.py, trust/seal.py).
    Migration(trust_schema.INTEGRITY_VERSION, trust_schema.INTEGRITY_NAME,
              trust_schema.apply_integrity),
    # The mirror's int8 blocks (storage/sqlite/vector_blocks.py): start-up reads them in
    # one pass instead of scanning vec0. A store's existing vectors are built into them
    # in the background at first use (no block state yet: stale).
    Migration(13, "vector blocks", _run(_V13)),
)

SCHEMA_VERSION = MIGRATIONS[-1].version
