"""The PostgreSQL schema, step by step, numbered and named as engine/storage/migrations.py.

Step N here makes what SQLite's step N makes, so one schema version means the same
tables on both backends and a store can be copied between them. Types follow SQLite's
meaning: INTEGER is 64-bit (BIGINT), REAL is a double, times stay ISO text (the engine
formats and compares them as text), tags and metadata stay JSON text (the engine
encodes and decodes them itself). Where SQLite needs a virtual table, PostgreSQL gets
its own kind of index:

- the keyword index: until step 11, ``memory_fts``, one ``tsvector`` per memory with a
  GIN index; from step 11, FTS5's own postings in b-tree tables (``keyword_docs``,
  ``keyword_postings``, ``keyword_totals``; keyword.py), written in the memory's
  transaction and deleted with it (cascade); from step 13 each term's document count
  (``keyword_terms``), kept by the postings' triggers.
- dense vectors: one table per embedding space, made when the space is first used
  (vectors.py), as in SQLite; step 2 makes the registry and loads pgvector. Until step
  13 each had an HNSW index; from step 13 none (recall scores the in-process mirror).

Steps 4 and 5 made the code index in every SQLite store and step 10 dropped it again
from stores that never indexed code: a new store has none of it, and here neither step
makes it (the code index on PostgreSQL is not built yet; see docs/postgres.md).

Append only: never edit a step that has shipped.
"""

from __future__ import annotations

__all__ = ["STEPS"]

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
INSERT INTO meta (key, value) VALUES ('application', 'aide-memoire');
CREATE TABLE memories (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    namespace TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('note', 'learning', 'turn', 'fact', 'summary')),
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    importance DOUBLE PRECISION NOT NULL DEFAULT 0.5,
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
    access_count BIGINT NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    utility DOUBLE PRECISION NOT NULL DEFAULT 0.0,
    session_id TEXT,
    speaker TEXT,
    role TEXT,
    position BIGINT,
    reply_to TEXT,
    context TEXT
);
CREATE INDEX memories_ns_created ON memories (namespace, created_at);
CREATE INDEX memories_ns_hash ON memories (namespace, content_hash);
CREATE INDEX memories_ns_session ON memories (namespace, session_id, position);
CREATE INDEX memories_ns_speaker ON memories (namespace, speaker) WHERE speaker IS NOT NULL;
-- FTS5's 'porter' without a stop-word list: every word is searchable, as in SQLite.
CREATE TEXT SEARCH DICTIONARY memory_stem (TEMPLATE = pg_catalog.snowball, LANGUAGE = english);
CREATE TEXT SEARCH CONFIGURATION memory_text (COPY = pg_catalog.english);
ALTER TEXT SEARCH CONFIGURATION memory_text
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
    WITH memory_stem;
CREATE TABLE memory_fts (
    rowid BIGINT PRIMARY KEY REFERENCES memories (rowid) ON DELETE CASCADE,
    namespace TEXT NOT NULL,
    document TSVECTOR NOT NULL
);
CREATE INDEX memory_fts_document ON memory_fts USING gin (document);
CREATE INDEX memory_fts_namespace ON memory_fts (namespace);
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
    max_rowid BIGINT NOT NULL DEFAULT 0,
    epoch BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (space, namespace)
);
"""

# "end" is a reserved word in PostgreSQL: the column keeps SQLite's name, quoted.
_V3 = """
CREATE TABLE memory_findings (
    memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    category TEXT NOT NULL CHECK (category IN ('pii', 'injection')),
    rule TEXT NOT NULL,
    start BIGINT NOT NULL,
    "end" BIGINT NOT NULL,
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
    seq BIGINT PRIMARY KEY,
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
    seq BIGINT NOT NULL,
    hash TEXT NOT NULL
);
CREATE TABLE namespace_sizes (
    namespace TEXT PRIMARY KEY,
    count BIGINT NOT NULL,
    sum_log DOUBLE PRECISION NOT NULL,
    sum_log_sq DOUBLE PRECISION NOT NULL
);
INSERT INTO namespace_sizes (namespace, count, sum_log, sum_log_sq)
    SELECT namespace, count(*), sum(ln(greatest(length(content), 1))),
           sum(ln(greatest(length(content), 1)) ^ 2)
    FROM memories GROUP BY namespace;
"""

# SQLite's triggers, as PL/pgSQL functions bound to the store's schema (search_path
# FROM CURRENT), so a session with another search_path still cleans the right tables.
_ORPHANS = """
        SELECT me.entity_id FROM memory_entities me WHERE me.memory_rowid = OLD.rowid
        AND NOT EXISTS (SELECT 1 FROM memory_entities o
                        WHERE o.entity_id = me.entity_id AND o.memory_rowid != OLD.rowid)"""

_V6 = f"""
CREATE TABLE entities (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    display TEXT NOT NULL,
    type TEXT NOT NULL DEFAULT 'name',
    mentions BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    UNIQUE (namespace, name)
);
CREATE TABLE memory_entities (
    memory_rowid BIGINT NOT NULL,
    entity_id BIGINT NOT NULL,
    source TEXT NOT NULL DEFAULT 'rule',
    PRIMARY KEY (memory_rowid, entity_id)
);
CREATE INDEX memory_entities_entity ON memory_entities (entity_id, memory_rowid);
CREATE TABLE facts (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    namespace TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    subject TEXT NOT NULL,
    subject_text TEXT NOT NULL,
    predicate TEXT NOT NULL,
    object TEXT NOT NULL,
    object_text TEXT NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to TEXT,
    superseded_by BIGINT,
    ended_by TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX facts_slot ON facts (namespace, subject, predicate, valid_from);
CREATE INDEX facts_memory ON facts (memory_id);
CREATE TABLE entity_edges (
    namespace TEXT NOT NULL,
    a BIGINT NOT NULL,
    b BIGINT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('cooccur', 'similar')),
    weight DOUBLE PRECISION NOT NULL,
    used_at TEXT NOT NULL,
    PRIMARY KEY (a, b, kind)
);
CREATE INDEX entity_edges_b ON entity_edges (b, a);
CREATE FUNCTION memories_facts_on_delete() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $body$
BEGIN
    DELETE FROM facts WHERE memory_id = OLD.id;
    UPDATE facts SET valid_to = NULL, superseded_by = NULL, ended_by = NULL
        WHERE ended_by = OLD.id;
    DELETE FROM entity_edges WHERE a IN ({_ORPHANS}) OR b IN ({_ORPHANS});
    DELETE FROM entities WHERE id IN ({_ORPHANS});
    DELETE FROM memory_entities WHERE memory_rowid = OLD.rowid;
    UPDATE memories SET status = 'active', valid_to = NULL, superseded_by = NULL
        WHERE superseded_by = OLD.id AND namespace = OLD.namespace;
    RETURN OLD;
END
$body$;
CREATE TRIGGER memories_facts_on_delete AFTER DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION memories_facts_on_delete();
CREATE FUNCTION memories_facts_on_edit() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $body$
BEGIN
    DELETE FROM facts WHERE memory_id = OLD.id;
    UPDATE facts SET valid_to = NULL, superseded_by = NULL, ended_by = NULL
        WHERE ended_by = OLD.id;
    RETURN NEW;
END
$body$;
CREATE TRIGGER memories_facts_on_edit AFTER UPDATE OF content ON memories
    FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content)
    EXECUTE FUNCTION memories_facts_on_edit();
"""

_V7 = """
CREATE TABLE memory_links (
    source_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    kind TEXT NOT NULL
        CHECK (kind IN ('near_duplicate', 'duplicate_of', 'merged_into', 'summarizes')),
    score DOUBLE PRECISION,
    namespace TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (source_id, target_id, kind)
);
CREATE INDEX memory_links_target ON memory_links (target_id, kind);
CREATE INDEX memory_links_ns_kind ON memory_links (namespace, kind);
CREATE TABLE memory_feedback (
    memory_id TEXT PRIMARY KEY,
    helpful BIGINT NOT NULL DEFAULT 0,
    unhelpful BIGINT NOT NULL DEFAULT 0,
    wrong BIGINT NOT NULL DEFAULT 0,
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
);
"""

_V8 = """
CREATE TABLE memory_terms (
    namespace TEXT NOT NULL,
    term TEXT NOT NULL,
    memory_rowid BIGINT NOT NULL,
    PRIMARY KEY (namespace, term, memory_rowid)
);
CREATE INDEX memory_terms_rowid ON memory_terms (memory_rowid);
CREATE TABLE memory_updates (
    namespace TEXT NOT NULL,
    old_id TEXT NOT NULL,
    new_id TEXT NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('applied', 'proposed', 'rejected')),
    signals TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (namespace, old_id, new_id)
);
CREATE INDEX memory_updates_new ON memory_updates (namespace, new_id);
CREATE FUNCTION memories_terms_on_delete() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $body$
BEGIN
    DELETE FROM memory_terms WHERE memory_rowid = OLD.rowid;
    DELETE FROM memory_updates WHERE namespace = OLD.namespace
        AND (old_id = OLD.id OR new_id = OLD.id);
    RETURN OLD;
END
$body$;
CREATE TRIGGER memories_terms_on_delete AFTER DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION memories_terms_on_delete();
CREATE FUNCTION memories_terms_on_edit() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $body$
BEGIN
    DELETE FROM memory_terms WHERE memory_rowid = OLD.rowid;
    RETURN NEW;
END
$body$;
CREATE TRIGGER memories_terms_on_edit AFTER UPDATE OF content ON memories
    FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content)
    EXECUTE FUNCTION memories_terms_on_edit();
"""

_V9 = """
CREATE INDEX memories_ns_status ON memories (namespace, status) WHERE status != 'active';
"""

# The keyword index as FTS5 keeps it, so that PostgreSQL scores exactly SQLite's bm25
# (keyword.py): a row per indexed memory with its length in tokens, a row per (term,
# memory) with its frequency per column and its places (for phrases), and the index's
# totals (bm25's N and average length) kept by a trigger as one row per server process,
# so concurrent writers never wait on one counter row. The totals count every document
# ever written, as SQLite's contentless-delete FTS5 table does (a delete, or a rewrite,
# leaves its averages record alone: measured, tests/postgres/test_keyword_parity.py).
# A document's postings go with it by a trigger (one DELETE by rowid), not a foreign
# key, whose check would lock the document's row once per posting written.
# The rows are filled by keyword_backfill.py from the memories, in the migrating
# transaction.
_V11 = """
DROP TABLE memory_fts;
DROP TEXT SEARCH CONFIGURATION memory_text;
DROP TEXT SEARCH DICTIONARY memory_stem;
CREATE TABLE keyword_docs (
    rowid BIGINT PRIMARY KEY REFERENCES memories (rowid) ON DELETE CASCADE,
    namespace TEXT NOT NULL,
    length INTEGER NOT NULL
);
CREATE TABLE keyword_postings (
    term TEXT NOT NULL,
    namespace TEXT NOT NULL,
    rowid BIGINT NOT NULL,
    freqs INTEGER[] NOT NULL,
    places INTEGER[] NOT NULL,
    PRIMARY KEY (term, namespace, rowid)
);
CREATE INDEX keyword_postings_rowid ON keyword_postings (rowid);
CREATE TABLE keyword_totals (
    backend INTEGER PRIMARY KEY,
    docs BIGINT NOT NULL,
    tokens BIGINT NOT NULL
);
CREATE FUNCTION keyword_docs_totals() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $body$
BEGIN
    INSERT INTO keyword_totals AS t (backend, docs, tokens)
        VALUES (pg_backend_pid(), 1, NEW.length)
        ON CONFLICT (backend) DO UPDATE SET docs = t.docs + 1, tokens = t.tokens + NEW.length;
    RETURN NEW;
END
$body$;
CREATE TRIGGER keyword_docs_totals AFTER INSERT ON keyword_docs
    FOR EACH ROW EXECUTE FUNCTION keyword_docs_totals();
CREATE FUNCTION keyword_docs_postings() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $body$
BEGIN
    DELETE FROM keyword_postings WHERE rowid = OLD.rowid;
    RETURN OLD;
END
$body$;
CREATE TRIGGER keyword_docs_postings AFTER DELETE ON keyword_docs
    FOR EACH ROW EXECUTE FUNCTION keyword_docs_postings();
"""

# Forget's owed purges (trust/forget.py). IF NOT EXISTS: a store whose recorded version
# was set back (a test replays steps on real rows) reruns it.
_V12 = """
CREATE TABLE IF NOT EXISTS purge_owed (
    id BIGSERIAL PRIMARY KEY,
    at TEXT NOT NULL,
    stage TEXT NOT NULL CHECK (stage IN ('deleted', 'merged')),
    reason TEXT NOT NULL DEFAULT ''
)
"""

# Each term's document count, kept in step with the postings by statement triggers (one
# upsert per written document, in its transaction), so that bm25's idf reads one key per
# (term, namespace) instead of counting the term's postings: 17-54 ms a common word at
# 100k under load (docs/postgres.md, "The tail, profiled"). Per namespace, under the same
# row-level policy as the postings, so a role counts (and sees the words of) only the
# namespaces it may read, as a count of the postings did; a count that reaches zero
# leaves with its row, so a forgotten word stays in no table. Writers already queue on
# one row lock (database.py), so a common term's row adds no wait of its own.
# The HNSW indexes go: recall scores the in-process mirror exactly (every row, which the
# gate's mean and spread need), never the index, and each written vector paid ~5.5 ms
# for it. ``vectors.knn`` stays, exact (a scan of the namespace's partition).
_V13 = """
CREATE TABLE keyword_terms (
    term TEXT NOT NULL,
    namespace TEXT NOT NULL,
    docs BIGINT NOT NULL,
    PRIMARY KEY (term, namespace)
);
INSERT INTO keyword_terms (term, namespace, docs)
    SELECT term, namespace, count(*) FROM keyword_postings GROUP BY term, namespace;
CREATE FUNCTION keyword_terms_count() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $body$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE keyword_terms t SET docs = t.docs - g.n
            FROM (SELECT term, namespace, count(*) AS n FROM gone GROUP BY term, namespace) g
            WHERE t.term = g.term AND t.namespace = g.namespace;
        DELETE FROM keyword_terms t USING (SELECT DISTINCT term, namespace FROM gone) g
            WHERE t.term = g.term AND t.namespace = g.namespace AND t.docs <= 0;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO keyword_terms AS t (term, namespace, docs)
            SELECT term, namespace, count(*) FROM added GROUP BY term, namespace
            ORDER BY term, namespace
            ON CONFLICT (term, namespace) DO UPDATE SET docs = t.docs + excluded.docs;
    END IF;
    RETURN NULL;
END
$body$;
CREATE TRIGGER keyword_terms_added AFTER INSERT ON keyword_postings
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION keyword_terms_count();
CREATE TRIGGER keyword_terms_gone AFTER DELETE ON keyword_postings
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION keyword_terms_count();
CREATE TRIGGER keyword_terms_moved AFTER UPDATE ON keyword_postings
    REFERENCING OLD TABLE AS gone NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION keyword_terms_count();
DO $drop$
DECLARE vectors TEXT;
BEGIN
    FOR vectors IN SELECT table_name FROM vector_spaces LOOP
        EXECUTE format('DROP INDEX IF EXISTS %I', vectors || '_hnsw');
    END LOOP;
END
$drop$;
"""

# Forget at size (SQLite's step 15): the summaries quoting a row, and what its delete
# trigger revives (rows it superseded, facts it ended), each found by an index instead of
# a scan of the namespace. PostgreSQL plans the trigger's OR on memory_updates as a
# bitmap OR of its two keys already; its trigger stays.
_V15 = """
CREATE INDEX IF NOT EXISTS memories_ns_summary ON memories (namespace, kind)
    WHERE kind = 'summary';
CREATE INDEX IF NOT EXISTS memories_superseded_by ON memories (namespace, superseded_by)
    WHERE superseded_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_ended_by ON facts (ended_by) WHERE ended_by IS NOT NULL;
"""

# The near-duplicate check's codes (SQLite's step 16); a memory's codes go with it.
_V16 = """
CREATE TABLE IF NOT EXISTS near_code_slices (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    space TEXT NOT NULL,
    namespace TEXT NOT NULL,
    coded_to BIGINT NOT NULL,
    UNIQUE (space, namespace)
);
CREATE TABLE IF NOT EXISTS near_codes (
    slice BIGINT NOT NULL,
    code BIGINT NOT NULL,
    memory_rowid BIGINT NOT NULL REFERENCES memories (rowid) ON DELETE CASCADE,
    PRIMARY KEY (slice, code, memory_rowid)
);
CREATE INDEX IF NOT EXISTS near_codes_rowid ON near_codes (memory_rowid);
"""

# The SQL of each step by version; names come from engine/storage/migrations.py (one history
# for both backends). An empty script records the step (see the module docstring).
STEPS: dict[int, str] = {
    1: _V1, 2: _V2, 3: _V3, 4: "", 5: "", 6: _V6, 7: _V7, 8: _V8, 9: _V9, 10: "", 11: _V11,
    # The owed purges only: sealing the audited fields rests on SQLite's TEMP triggers
    # (trust/seal.py) and is not done on this backend yet (docs/postgres.md).
    12: _V12,
    13: _V13,
    # SQLite's int8 vector blocks: here the mirror reads the vector table (the blocks are
    # optional; docs/benchmarks.md, "A million memories, second round").
    14: "",
    15: _V15,
    16: _V16,
}
