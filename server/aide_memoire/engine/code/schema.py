"""Schema of the code index, made on first use (see ``ensure``), not in every store.

Migrations 4 and 5 once created it in every store; migration 10 drops it from stores that
never indexed anything (a store with one memory is ~20 b-trees, ~40 kB, smaller), and the
index makes it, ``IF NOT EXISTS``, in the transaction of its first write.

Roots, files, chunks and symbols are plain tables; ``code_fts`` is a contentless FTS5
table keyed by chunk id. Because it is contentless, its rows must be deleted explicitly
(cascades do not reach it): index.py does that in the same transaction as the chunks.
The tokenizer keeps ``_`` inside tokens so that ``get_user_name`` stays one term; the
split words (``get user name``) are added to the indexed text in Python.
"""

from __future__ import annotations

import re

from ..storage.protocol import Connection

__all__ = [
    "DOCS_SQL", "DOC_TABLES", "FTS_COLUMNS", "MIGRATION_NAME", "SCHEMA_SQL", "TABLES",
    "VECTORS_SQL", "drop_if_unused", "ensure", "present",
]

MIGRATION_NAME = "code index tables made on first use"

# bm25() weights in search.py follow this order.
FTS_COLUMNS = ("name", "signature", "doc", "body", "path")

SCHEMA_SQL = """
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

# Dense vectors of chunks (engine/code/vectors.py), one per chunk, tagged with the
# embedding space that made them. Deleted explicitly with their chunks, like code_fts.
VECTORS_SQL = """
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
DOCS_SQL = """
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
DOC_TABLES = ("code_doc_links", "code_doc_pages")
TABLES = (
    *DOC_TABLES, "code_vectors", "code_fts", "code_symbols", "code_chunks",
    "code_files", "code_roots",
)

# The two shipped steps above, made idempotent: their text stays as migrations 4 and 5
# ran it (never edit a shipped step), this is derived from it so the two cannot drift.
_ENSURE = [
    re.sub(r"^CREATE (VIRTUAL TABLE|TABLE|INDEX) ", r"CREATE \1 IF NOT EXISTS ", s.strip())
    for sql in (SCHEMA_SQL, VECTORS_SQL, DOCS_SQL)
    for s in sql.split(";\n")
    if s.strip()
]


def present(conn: Connection, table: str = "code_roots") -> bool:
    """Whether this store has the code index's tables (it has indexed something); with
    ``table``, whether that one exists (a store indexed before docs has no doc tables)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    return row is not None


def ensure(tx: Connection) -> None:
    """Create the code index's tables and indexes if missing, inside ``tx`` (a write
    transaction): two processes indexing at once both succeed, and a failure leaves none."""
    for statement in _ENSURE:
        tx.execute(statement)


def drop_if_unused(conn: Connection) -> None:
    """Migration 10: drop the code index from a store that never indexed a tree; a store
    with a root keeps its tables and rows untouched."""
    if not present(conn):
        return
    if conn.execute("SELECT 1 FROM code_roots LIMIT 1").fetchone() is not None:
        return
    for table in TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
