"""SQLite's schema steps, numbered as engine/storage/migrations.py records them.

Every table of a SQLite store is made here, the features' too (trust's findings, review
queue and audit log; the facts and entities; lifecycle's links, feedback and runs; the
general-update path's terms; the code index), so that storage imports no feature:
storage/postgres/schema.py is the same history for PostgreSQL. A new table's step goes
at the end of both (docs/architecture.md, "Adding a field, a tool, a backend").

These steps sit beside db.py, which runs them, rather than in storage/sqlite/: every
module there imports storage's own (protocol, rows), so the database importing it would
close a cycle between the two packages.

Append only: a step that has shipped is never edited (stores made by it exist), and its
DDL here is the text that ran then.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from . import seals
from .protocol import Connection
from .trust import append_event

__all__ = [
    "CODE_DOCS_SQL", "CODE_DOC_TABLES", "CODE_FTS_COLUMNS", "CODE_SCHEMA_SQL", "CODE_TABLES",
    "CODE_VECTORS_SQL", "FTS_TOKENIZE", "STEPS", "code_index_present",
    "ensure_code_index",
]

# The keyword index's tokenizer (step 1); PostgreSQL's index tokenises with it too
# (storage/postgres/keyword_tokens.py), so the two backends' tokens cannot drift apart.
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"


def _run(sql: str, *, triggers: bool = False) -> Callable[[Connection], None]:
    def apply(conn: Connection) -> None:
        # Triggers hold ';' inside their bodies: those scripts split on the statement ends
        # outside them.
        for statement in _statements(sql) if triggers else sql.split(";\n"):
            if statement.strip():
                conn.execute(statement)

    return apply


# -- steps 1 and 2: memories, the keyword index, vector spaces ----------------------------

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

# -- step 3: trust (findings, the review queue, the audit log) ----------------------------
# None of these tables holds memory text: findings and evidence are kinds and character
# spans, audit events carry content hashes. Forgetting a memory therefore only has to
# clean the memory row and its indexes.

_TRUST = """
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


def _trust(conn: Connection) -> None:
    """Create the trust tables, then size statistics for namespaces that already hold rows."""
    _run(_TRUST)(conn)
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



# -- steps 4, 5 and 10: the code index, made on first use ---------------------------------
# Migrations 4 and 5 once created it in every store; migration 10 drops it from stores
# that never indexed anything (a store with one memory is ~20 b-trees, ~40 kB, smaller),
# and the index makes it, ``IF NOT EXISTS``, in the transaction of its first write.
#
# Roots, files, chunks and symbols are plain tables; ``code_fts`` is a contentless FTS5
# table keyed by chunk id. Because it is contentless, its rows must be deleted explicitly
# (cascades do not reach it): the code index does that in the same transaction as the
# chunks. The tokenizer keeps ``_`` inside tokens so that ``get_user_name`` stays one
# term; the split words (``get user name``) are added to the indexed text in Python.

# bm25() weights in the code search follow this order.
CODE_FTS_COLUMNS = ("name", "signature", "doc", "body", "path")

CODE_SCHEMA_SQL = """
CREATE TABLE code_roots (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    indexed_at TEXT
);
CREATE TABLE code_files (
    id INTEGER PRIMARY KEY,
    root_id INTEGER NOT NULL REFERENCES code_roots (id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    language TEXT NOT NULL,
    parser TEXT NOT NULL,
    hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    indexed_at TEXT NOT NULL,
    UNIQUE (root_id, path)
);
CREATE TABLE code_chunks (
    id INTEGER PRIMARY KEY,
    root_id INTEGER NOT NULL REFERENCES code_roots (id) ON DELETE CASCADE,
    file_id INTEGER NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
    language TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX code_chunks_file ON code_chunks (file_id);
CREATE INDEX code_chunks_root_lang ON code_chunks (root_id, language);
CREATE TABLE code_symbols (
    id INTEGER PRIMARY KEY,
    root_id INTEGER NOT NULL REFERENCES code_roots (id) ON DELETE CASCADE,
    file_id INTEGER NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
    chunk_id INTEGER REFERENCES code_chunks (id) ON DELETE SET NULL,
    name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    kind TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    signature TEXT NOT NULL DEFAULT ''
);
CREATE INDEX code_symbols_name ON code_symbols (root_id, name);
CREATE INDEX code_symbols_qualified ON code_symbols (root_id, qualified_name);
CREATE INDEX code_symbols_file ON code_symbols (file_id);
CREATE INDEX code_symbols_chunk ON code_symbols (chunk_id);
CREATE VIRTUAL TABLE code_fts USING fts5(
    name, signature, doc, body, path,
    content='', contentless_delete=1,
    tokenize="porter unicode61 remove_diacritics 2 tokenchars '_'"
)
"""

# Dense vectors of chunks (the code index's dense ranker), one per chunk, tagged with the
# embedding space that made them. Deleted explicitly with their chunks, like code_fts.
CODE_VECTORS_SQL = """
CREATE TABLE code_vectors (
    chunk_id INTEGER PRIMARY KEY,
    root_id INTEGER NOT NULL,
    space TEXT NOT NULL,
    embedding BLOB NOT NULL
);
CREATE INDEX code_vectors_root_space ON code_vectors (root_id, space)
"""

# Prose pages (engine/code/docs.py): a page's title, front matter (JSON) and heading
# anchors, and each link as written. Links are resolved when read (their targets come
# and go with other files). Deleted explicitly with their file, like code_fts.
CODE_DOCS_SQL = """
CREATE TABLE code_doc_pages (
    file_id INTEGER PRIMARY KEY,
    root_id INTEGER NOT NULL,
    title TEXT NOT NULL,
    front_matter TEXT NOT NULL DEFAULT '{}',
    anchors TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE code_doc_links (
    id INTEGER PRIMARY KEY,
    root_id INTEGER NOT NULL,
    file_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    text TEXT NOT NULL,
    target TEXT NOT NULL,
    anchor TEXT NOT NULL,
    style TEXT NOT NULL
);
CREATE INDEX doc_links_file ON code_doc_links (file_id)
"""

# Children before parents, so that no foreign key names a table already gone.
# The prose pages' tables came after migrations 4 and 5: a store of then has none.
CODE_DOC_TABLES = ("code_doc_links", "code_doc_pages")
CODE_TABLES = (
    *CODE_DOC_TABLES, "code_vectors", "code_fts", "code_symbols", "code_chunks",
    "code_files", "code_roots",
)

# The two shipped steps above, made idempotent: their text stays as migrations 4 and 5
# ran it (never edit a shipped step), this is derived from it so the two cannot drift.
_ENSURE = [
    re.sub(r"^CREATE (VIRTUAL TABLE|TABLE|INDEX) ", r"CREATE \1 IF NOT EXISTS ", s.strip())
    for sql in (CODE_SCHEMA_SQL, CODE_VECTORS_SQL, CODE_DOCS_SQL)
    for s in sql.split(";\n")
    if s.strip()
]


def code_index_present(conn: Connection, table: str = "code_roots") -> bool:
    """Whether this store has the code index's tables (it has indexed something); with
    ``table``, whether that one exists (a store indexed before docs has no doc tables)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    return row is not None


def ensure_code_index(tx: Connection) -> None:
    """Create the code index's tables and indexes if missing, inside ``tx`` (a write
    transaction): two processes indexing at once both succeed, and a failure leaves none."""
    for statement in _ENSURE:
        tx.execute(statement)


def _drop_code_index_if_unused(conn: Connection) -> None:
    """Migration 10: drop the code index from a store that never indexed a tree; a store
    with a root keeps its tables and rows untouched."""
    if not code_index_present(conn):
        return
    if conn.execute("SELECT 1 FROM code_roots LIMIT 1").fetchone() is not None:
        return
    for table in CODE_TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {table}")


# -- steps 6 and 8: facts and entities; the general supersession path ---------------------
# Facts and links follow their memory: triggers delete them when the memory is deleted
# (``forget`` must leave no derived text behind) and drop a memory's facts when its text
# is edited (they no longer describe it). ``memory_terms`` holds each memory's aspect and
# name terms, so a new memory finds older ones about the same thing with indexed lookups;
# ``memory_updates`` records every link the general path made or proposed.

_FACTS = """
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


_UPDATES = """
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


# -- step 7: lifecycle (links between memories, feedback, maintenance runs and leases) ----
# None of these tables holds memory text; a summary's text is itself a memory.

_LIFECYCLE = """
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



# -- step 12: integrity (owed purges, audited fields) -------------------------------------
# The same table on PostgreSQL (storage/postgres/schema.py step 12). IF NOT EXISTS: a
# store whose recorded version was set back (a test replays steps on real rows) reruns it.
_PURGE_OWED = """
CREATE TABLE IF NOT EXISTS purge_owed (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    stage TEXT NOT NULL CHECK (stage IN ('deleted', 'merged')),
    reason TEXT NOT NULL DEFAULT ''
)
"""




def _integrity(tx: Connection) -> None:
    """Step 12: the table of owed purges (trust/forget.py), and one ``memory.fields`` event
    sealing every existing memory's audited fields (trust/seal.py), appended to the chain
    like any event so that an existing log still verifies (trust on first use)."""
    tx.execute(_PURGE_OWED)
    detail = seals.all_detail(tx)
    if detail is not None:
        append_event(tx, actor="migration", action=seals.ACTION, detail=detail)


# The mirror's int8 blocks, tombstones and their state (storage/sqlite/vector_blocks.py);
# IF NOT EXISTS as the steps before it, so that a store marked older runs it again unharmed.
_V14 = """
CREATE TABLE IF NOT EXISTS vector_blocks (
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
CREATE TABLE IF NOT EXISTS vector_tombstones (
    space TEXT NOT NULL,
    namespace TEXT NOT NULL,
    row INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (space, namespace, row, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vector_block_state (
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


# Forgetting a row ran three scans of its namespace per row (2.5 s a row at 515k
# memories, docs/benchmarks.md): the summaries quoting it (``kind = 'summary'``, no
# index), the delete trigger's revival of what it superseded (``superseded_by``, no
# index) and of the facts it ended (``ended_by``, no index); and the trigger's
# ``old_id = x OR new_id = x`` on memory_updates read the namespace's updates. Partial
# indexes (only the rows that have the value: a few bytes for most stores) and the OR
# split into two deletes, each on its own key.
_V15 = """
CREATE INDEX IF NOT EXISTS memories_ns_summary ON memories (namespace, kind)
    WHERE kind = 'summary';
CREATE INDEX IF NOT EXISTS memories_superseded_by ON memories (namespace, superseded_by)
    WHERE superseded_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_ended_by ON facts (ended_by) WHERE ended_by IS NOT NULL;
DROP TRIGGER IF EXISTS memories_terms_on_delete;
CREATE TRIGGER memories_terms_on_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memory_terms WHERE memory_rowid = old.rowid;
    DELETE FROM memory_updates WHERE namespace = old.namespace AND old_id = old.id;
    -- The inner select reads memory_updates_new; a plain delete of this WITHOUT ROWID
    -- table is planned on its primary key's namespace prefix (a scan of the namespace).
    DELETE FROM memory_updates WHERE namespace = old.namespace AND new_id = old.id
        AND old_id IN (SELECT old_id FROM memory_updates
                       WHERE namespace = old.namespace AND new_id = old.id);
END
"""


# The near-duplicate check's hashing codes in the store (lifecycle/near_codes.py): a
# process looks a batch's rows up by the primary key instead of building an index over
# the namespace's vectors first (4 s of CPU at 1M rows, in every process). A store's
# existing rows get theirs on the first checked write of their namespace (coded_to).
_V16 = """
CREATE TABLE IF NOT EXISTS near_code_slices (
    id INTEGER PRIMARY KEY,
    space TEXT NOT NULL,
    namespace TEXT NOT NULL,
    coded_to INTEGER NOT NULL,
    UNIQUE (space, namespace)
);
CREATE TABLE IF NOT EXISTS near_codes (
    slice INTEGER NOT NULL,
    code INTEGER NOT NULL,
    memory_rowid INTEGER NOT NULL,
    PRIMARY KEY (slice, code, memory_rowid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS near_codes_rowid ON near_codes (memory_rowid);
CREATE TRIGGER IF NOT EXISTS near_codes_on_delete AFTER DELETE ON memories BEGIN
    DELETE FROM near_codes WHERE memory_rowid = old.rowid;
END
"""

# (version, name, apply), in order; engine/storage/migrations.py records them.
STEPS: tuple[tuple[int, str, Callable[[Connection], None]], ...] = (
    (1, "initial store", _run(_V1)),
    (2, "dense vector spaces", _run(_V2)),
    (3, "trust: review queue, audit log, pii", _trust),
    (4, "code index", _run(CODE_SCHEMA_SQL)),
    (5, "code vectors", _run(CODE_VECTORS_SQL)),
    (6, "facts and entities", _run(_FACTS, triggers=True)),
    (7, "lifecycle: links, feedback, maintenance runs and leases", _run(_LIFECYCLE)),
    (8, "general supersession terms and update links", _run(_UPDATES, triggers=True)),
    # Counts per namespace and status (the web page's listing) without reading every row
    # (~0.2 s at 100k memories). Partial, so that no query about active rows (the
    # duplicate check above all) can be planned onto it instead of its own index.
    (9, "namespace status index", _run(
        "CREATE INDEX memories_ns_status ON memories (namespace, status) "
        "WHERE status != 'active'")),
    # Steps 4 and 5 gave every store the code index's ~20 b-trees (one page each at
    # least), though most never index code: a store without a root loses them, and the
    # code index makes them on its first write (issue #20, small stores stay small).
    (10, "code index tables made on first use", _drop_code_index_if_unused),
    # PostgreSQL's keyword index becomes FTS5's postings, scored as FTS5's bm25
    # (storage/postgres/schema.py step 11); a SQLite store has them already in memory_fts.
    (11, "keyword postings", _run("")),
    # Forget's purge owed inside the file (a crash cannot lose it), and the fields that
    # decide recall sealed in the audit chain (trust/forget.py, trust/seal.py).
    (12, "integrity: owed purges, audited fields", _integrity),
    # PostgreSQL counts each keyword term's documents in a table kept by the postings'
    # triggers and drops the HNSW indexes recall never read (storage/postgres/schema.py
    # step 13); FTS5 keeps its counts in its doclists, and sqlite-vec has no such index.
    (13, "keyword term counts", _run("")),
    # The mirror's int8 blocks (storage/sqlite/vector_blocks.py): start-up reads them in
    # one pass instead of scanning vec0. A store's existing vectors are built into them
    # in the background at first use (no block state yet: stale, never read).
    (14, "vector blocks", _run(_V14)),
    (15, "indexes for forgetting at size", _run(_V15, triggers=True)),
    (16, "near-duplicate codes", _run(_V16, triggers=True)),
)
