"""The entity graph's writes that ignore a repeat, and mention lookups, on SQLite.

``INSERT OR IGNORE`` and ``group_concat`` are SQLite's (PostgreSQL: ``ON CONFLICT DO
NOTHING``, ``string_agg``); the rest of the graph's SQL (engine/facts/graph.py) is
portable and stays with the feature.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..protocol import Connection

__all__ = [
    "add_entities", "add_mentions", "add_similar_edges", "entities_of_memory", "mentioning",
]


def add_entities(tx: Connection, rows: Sequence[tuple[str, str, str, str, str]]) -> None:
    """(namespace, name, display, type, created_at) per entity; a known name is kept."""
    tx.executemany(
        "INSERT OR IGNORE INTO entities (namespace, name, display, type, mentions, "
        "created_at) VALUES (?, ?, ?, ?, 0, ?)",
        rows,
    )


def add_mentions(tx: Connection, links: Sequence[tuple[int, int, str]]) -> None:
    """(memory rowid, entity id, source) per mention; a repeated mention is kept once."""
    tx.executemany(
        "INSERT OR IGNORE INTO memory_entities (memory_rowid, entity_id, source) "
        "VALUES (?, ?, ?)",
        links,
    )


def add_similar_edges(
    tx: Connection, edges: Sequence[tuple[str, int, int, str]], weight: float
) -> None:
    """(namespace, a, b, used_at) 'similar' edges of ``weight``; a known edge is kept."""
    tx.executemany(
        "INSERT OR IGNORE INTO entity_edges (namespace, a, b, kind, weight, used_at) "
        f"VALUES (?, ?, ?, 'similar', {float(weight)}, ?)",
        edges,
    )


def mentioning(
    conn: Connection, entity_ids: Sequence[int], where_sql: tuple[str, list[Any]], limit: int
) -> list[tuple[str, str, list[int]]]:
    """(memory id, text, entity ids it mentions among ``entity_ids``) of memories passing
    the filter (a RowFilter's SQL on alias ``m``), most mentions first, newest on ties."""
    clause, params = where_sql
    rows = conn.execute(
        f"SELECT m.id, m.content, group_concat(me.entity_id) FROM memory_entities me "
        f"JOIN memories m ON m.rowid = me.memory_rowid WHERE me.entity_id IN "
        f"({','.join('?' * len(entity_ids))}) AND {clause} GROUP BY m.rowid "
        f"ORDER BY count(*) DESC, m.rowid DESC LIMIT ?",
        [*entity_ids, *params, limit],
    ).fetchall()
    return [(str(i), str(c), [int(e) for e in str(g).split(",")]) for i, c, g in rows]


def entities_of_memory(conn: Connection, memory_id: str, namespace: str) -> list[tuple[int, str]]:
    """(entity id, name) of the entities a memory mentions."""
    rows = conn.execute(
        "SELECT e.id, e.name FROM memories m JOIN memory_entities me ON "
        "me.memory_rowid = m.rowid JOIN entities e ON e.id = me.entity_id "
        "WHERE m.id = ? AND m.namespace = ?",
        (memory_id, namespace),
    ).fetchall()
    return [(int(i), str(n)) for i, n in rows]
