"""Renaming a namespace in every table, on SQLite (ops/adopt.py decides when).

The tables are found from SQLite's catalogue (every table with a ``namespace`` column),
so a table a later migration adds moves too; the vec0 partitions cannot be updated in
place and are rewritten row by row. The entity merge is portable SQL, shared with the
PostgreSQL twin (storage/postgres/namespaces.py), which lists its tables its own way.
"""

from __future__ import annotations

from ..protocol import Connection

__all__ = ["finish_move", "merge_entities", "move_namespace"]

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


def merge_entities(tx: Connection, old: str, new: str) -> None:
    """Entities of ``old`` into ``new``: one both know becomes one (mentions, edges and
    counts follow); the others change namespace."""
    pairs = tx.execute(
        "SELECT o.id, n.id, o.mentions FROM entities o JOIN entities n "
        "ON n.namespace = ? AND n.name = o.name WHERE o.namespace = ?", (new, old)
    ).fetchall()
    for old_id, new_id, mentions in pairs:
        # "UPDATE OR IGNORE", portably: a row the merged entity has already stays once.
        tx.execute(
            "UPDATE memory_entities SET entity_id = ? WHERE entity_id = ? AND NOT EXISTS ("
            "SELECT 1 FROM memory_entities o WHERE o.entity_id = ? "
            "AND o.memory_rowid = memory_entities.memory_rowid)", (new_id, old_id, new_id))
        tx.execute("DELETE FROM memory_entities WHERE entity_id = ?", (old_id,))
        for column, other in (("a", "b"), ("b", "a")):
            tx.execute(
                f"UPDATE entity_edges SET {column} = ? WHERE {column} = ? AND NOT EXISTS ("
                f"SELECT 1 FROM entity_edges o WHERE o.{column} = ? "
                f"AND o.{other} = entity_edges.{other} AND o.kind = entity_edges.kind)",
                (new_id, old_id, new_id))
        tx.execute("DELETE FROM entity_edges WHERE a = ? OR b = ?", (old_id, old_id))
        tx.execute("UPDATE entities SET mentions = mentions + ? WHERE id = ?", (mentions, new_id))
        tx.execute("DELETE FROM entities WHERE id = ?", (old_id,))
    tx.execute("UPDATE entities SET namespace = ? WHERE namespace = ?", (new, old))


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


def finish_move(tx: Connection, old: str, new: str) -> None:
    """The last step on either backend: ``old``'s size statistics added to ``new``'s,
    then the memories themselves (portable SQL: the upsert names its table's columns)."""
    sizes = tx.execute("SELECT count, sum_log, sum_log_sq FROM namespace_sizes "
                       "WHERE namespace = ?", (old,)).fetchone()
    if sizes is not None:
        tx.execute(
            "INSERT INTO namespace_sizes (namespace, count, sum_log, sum_log_sq) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (namespace) DO UPDATE SET "
            "count = namespace_sizes.count + excluded.count, "
            "sum_log = namespace_sizes.sum_log + excluded.sum_log, "
            "sum_log_sq = namespace_sizes.sum_log_sq + excluded.sum_log_sq", (new, *sizes))
        tx.execute("DELETE FROM namespace_sizes WHERE namespace = ?", (old,))
    tx.execute("UPDATE memories SET namespace = ? WHERE namespace = ?", (new, old))
