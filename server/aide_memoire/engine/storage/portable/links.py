"""Links between memories (``memory_links``) and a memory's entity mentions, on either backend.

Every statement is portable (``ON CONFLICT DO NOTHING``: SQLite 3.24+ and PostgreSQL).
"""

from __future__ import annotations

from ..protocol import Connection

__all__ = ["PortableLinks", "drop_mentions"]


class PortableLinks:
    """``memory_links``: consolidation, duplicates and merges between memories."""

    @staticmethod
    def add(
        tx: Connection,
        values: tuple[str, str, str, float | None, str, str],
    ) -> None:
        """(source id, target id, kind, score, namespace, created_at); a repeat is ignored."""
        tx.execute(
            "INSERT INTO memory_links (source_id, target_id, kind, score, namespace, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            values,
        )

    @staticmethod
    def of(conn: Connection, memory_id: str) -> list[tuple[str, str, str, float | None]]:
        """(source, target, kind, score) of every link touching a memory, oldest first."""
        return [
            (str(s), str(t), str(k), None if sc is None else float(sc))
            for s, t, k, sc in conn.execute(
                "SELECT source_id, target_id, kind, score FROM memory_links "
                "WHERE source_id = ? OR target_id = ? ORDER BY created_at",
                (memory_id, memory_id),
            )
        ]

    @staticmethod
    def sources_of(conn: Connection, target_id: str, kind: str, namespace: str) -> set[str]:
        """Ids linking to ``target_id`` with ``kind`` (e.g. the summaries of a memory)."""
        return {str(r[0]) for r in conn.execute(
            "SELECT source_id FROM memory_links WHERE target_id = ? AND kind = ? "
            "AND namespace = ?", (target_id, kind, namespace))}

    @staticmethod
    def between_active(
        conn: Connection, namespace: str, kind: str
    ) -> list[tuple[str, str, float | None]]:
        """(source, target, score) of a namespace's ``kind`` links whose two ends are
        both active."""
        return [
            (str(s), str(t), None if sc is None else float(sc))
            for s, t, sc in conn.execute(
                "SELECT l.source_id, l.target_id, l.score FROM memory_links l "
                "JOIN memories a ON a.id = l.source_id JOIN memories b ON b.id = l.target_id "
                "WHERE l.namespace = ? AND l.kind = ? AND a.status = 'active' "
                "AND b.status = 'active'", (namespace, kind),
            )
        ]


def drop_mentions(tx: Connection, rowid: int) -> None:
    """Remove a memory's entity mentions; entities no other memory mentions go, with edges."""
    orphans = [int(r[0]) for r in tx.execute(
        "SELECT me.entity_id FROM memory_entities me WHERE me.memory_rowid = ? "
        "AND NOT EXISTS (SELECT 1 FROM memory_entities o WHERE o.entity_id = me.entity_id "
        "AND o.memory_rowid != me.memory_rowid)", (rowid,))]
    tx.execute("DELETE FROM memory_entities WHERE memory_rowid = ?", (rowid,))
    for start in range(0, len(orphans), 500):  # bound the placeholders per statement
        ids = orphans[start : start + 500]
        marks = ",".join("?" * len(ids))
        tx.execute(f"DELETE FROM entity_edges WHERE a IN ({marks}) OR b IN ({marks})",
                   [*ids, *ids])
        tx.execute(f"DELETE FROM entities WHERE id IN ({marks})", ids)
