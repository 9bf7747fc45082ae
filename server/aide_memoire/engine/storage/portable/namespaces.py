"""The portable part of a namespace move: merging entities and finishing the move."""

from __future__ import annotations

from ..protocol import Connection

__all__ = ["finish_move", "merge_entities"]


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
