"""Renaming a namespace in every table, on SQLite (ops/adopt.py decides when).

The tables are found from SQLite's catalogue (every table with a ``namespace`` column),
so a table a later migration adds moves too; the vec0 partitions cannot be updated in
place and are rewritten row by row. The entity merge is portable SQL, shared with the
PostgreSQL twin (storage/postgres/namespaces.py), which lists its tables its own way.
"""

from __future__ import annotations

from ..portable.namespaces import finish_move, merge_entities
from ..protocol import Connection

__all__ = ["move_namespace"]

# Kept as written: history, not state. Entities are merged by name below.
_SKIP = {"audit_events", "entities", "memories"}


def _tables(tx: Connection) -> list[str]:
    names = [str(r[0]) for r in tx.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
    )]
    out = []
    for name in names:
        columns = {str(c[1]) for c in tx.execute(f'PRAGMA table_info("{name}")')}
        if "namespace" in columns and name not in _SKIP:
            out.append(name)
    return out


def _move_vectors(tx: Connection, old: str, new: str) -> None:
    for (table,) in tx.execute("SELECT table_name FROM vector_spaces").fetchall():
        rows = tx.execute(
            f"SELECT rowid, embedding FROM {table} WHERE namespace = ?", (old,)
        ).fetchall()
        for rowid, blob in rows:
            tx.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
            tx.execute(f"INSERT INTO {table} (rowid, namespace, embedding) VALUES (?, ?, ?)",
                       (rowid, new, blob))
    # The in-process vector caches follow vector_state's epoch: make every one reload.
    tx.execute("UPDATE vector_state SET epoch = epoch + 1 WHERE namespace IN (?, ?)", (old, new))


def move_namespace(tx: Connection, old: str, new: str, *, vectors: bool) -> int:
    """Move every row of ``old`` into ``new`` in the caller's transaction (entities both
    know become one; ``vectors`` when sqlite-vec is loaded); returns the memories moved."""
    moved = int(tx.execute(
        "SELECT count(*) FROM memories WHERE namespace = ?", (old,)).fetchone()[0])
    if not moved:
        return 0
    if vectors:
        _move_vectors(tx, old, new)
    merge_entities(tx, old, new)
    for table in _tables(tx):
        if table == "namespace_sizes":
            continue
        tx.execute(f"UPDATE OR IGNORE {table} SET namespace = ? WHERE namespace = ?",
                   (new, old))
        tx.execute(f"DELETE FROM {table} WHERE namespace = ?", (old,))
    finish_move(tx, old, new)
    return moved


