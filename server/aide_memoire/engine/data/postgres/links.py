"""Links between memories on PostgreSQL (the :class:`~..repositories.MemoryLinks` Protocol).

Only the insert differs from SQLite's (``ON CONFLICT DO NOTHING`` for ``INSERT OR
IGNORE``, against memory_links' primary key); the reads are portable and inherited.
"""

from __future__ import annotations

from ..protocol import Connection
from ..sqlite.links import SqliteLinks

__all__ = ["PostgresLinks"]


class PostgresLinks(SqliteLinks):
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
