"""The entity graph's rows (entities, mentions, edges) and its lookups, on either backend.

Every statement but two is portable as written (``ON CONFLICT DO NOTHING`` is SQLite
3.24+ and PostgreSQL); each backend's class renders those two: the filter of
:meth:`~PortableEntityGraph.mentioning` and the name range of ``named_like``
(storage/sqlite/entities.py, storage/postgres/entities.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..filter import RowFilter
from ..protocol import Connection

__all__ = ["PortableEntityGraph"]

# The last code point of the Basic Multilingual Plane: every name that starts with a
# prefix sorts below prefix + this (as in SQLite's own prefix ranges).
_TOP = "\uffff"


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


class PortableEntityGraph:
    """``entities``, ``memory_entities`` and ``entity_edges`` (the bundle's ``entities``)."""

    # The prefix range's comparison of ``name``; PostgreSQL forces byte order.
    _name = "name"

    @staticmethod
    def add_entities(tx: Connection, rows: Sequence[tuple[str, str, str, str, str]]) -> None:
        """(namespace, name, display, type, created_at) per entity; a known name is kept."""
        tx.executemany(
            "INSERT INTO entities (namespace, name, display, type, mentions, created_at) "
            "VALUES (?, ?, ?, ?, 0, ?) ON CONFLICT DO NOTHING",
            rows,
        )

    @staticmethod
    def add_mentions(tx: Connection, links: Sequence[tuple[int, int, str]]) -> None:
        """(memory rowid, entity id, source) per mention; a repeated mention is kept once."""
        tx.executemany(
            "INSERT INTO memory_entities (memory_rowid, entity_id, source) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            links,
        )

    @staticmethod
    def add_similar_edges(
        tx: Connection, edges: Sequence[tuple[str, int, int, str]], weight: float
    ) -> None:
        """(namespace, a, b, used_at) 'similar' edges of ``weight``; a known edge is kept."""
        tx.executemany(
            "INSERT INTO entity_edges (namespace, a, b, kind, weight, used_at) "
            "VALUES (?, ?, ?, 'similar', ?, ?) ON CONFLICT DO NOTHING",
            [(ns, a, b, float(weight), used) for ns, a, b, used in edges],
        )

    def named_like(
        self, conn: Connection, namespace: str, names: Sequence[str], prefix: str
    ) -> list[tuple[int, str]]:
        """(id, name) of a namespace's entities named one of ``names`` or starting with
        ``prefix`` (longer than it), compared code point by code point."""
        # Two indexed lookups on (namespace, name); as one OR, SQLite scanned them all.
        n = self._name
        rows = conn.execute(
            f"SELECT id, name FROM entities WHERE namespace = ? AND name IN ({_marks(names)}) "
            f"UNION SELECT id, name FROM entities WHERE namespace = ? AND {n} > ? AND {n} < ?",
            [namespace, *names, namespace, prefix, prefix + _TOP],
        ).fetchall()
        return [(int(i), str(name)) for i, name in rows]

    @staticmethod
    def _where(where: RowFilter) -> tuple[str, list[Any]]:
        """The row filter in the dialect's SQL (each backend's class says)."""
        raise NotImplementedError

    def mentioning(
        self, conn: Connection, entity_ids: Sequence[int], where: RowFilter, limit: int
    ) -> list[tuple[str, str, list[int]]]:
        """(memory id, text, entity ids it mentions among ``entity_ids``) of memories passing
        ``where``, most mentions first, newest on ties."""
        if not entity_ids:
            return []
        clause, params = self._where(where)
        ids = list(entity_ids)
        # Rank on rowids alone, then read the texts of the few that rank: an entity
        # mentioned by thousands of memories costs no read of thousands of texts.
        top = [int(r) for r, in conn.execute(
            "SELECT me.memory_rowid FROM memory_entities me JOIN memories m "
            f"ON m.rowid = me.memory_rowid WHERE me.entity_id IN ({_marks(ids)}) AND {clause} "
            "GROUP BY me.memory_rowid ORDER BY count(*) DESC, me.memory_rowid DESC LIMIT ?",
            [*ids, *params, limit],
        )]
        if not top:
            return []
        found: dict[int, list[int]] = {rowid: [] for rowid in top}
        for rowid, entity in conn.execute(
            f"SELECT memory_rowid, entity_id FROM memory_entities WHERE memory_rowid IN "
            f"({_marks(top)}) AND entity_id IN ({_marks(ids)}) ORDER BY entity_id",
            [*top, *ids],
        ):
            found[int(rowid)].append(int(entity))
        texts = {int(r): (str(i), str(c)) for r, i, c in conn.execute(
            f"SELECT rowid, id, content FROM memories WHERE rowid IN ({_marks(top)})", top)}
        return [(*texts[rowid], found[rowid]) for rowid in top if rowid in texts]

    @staticmethod
    def entities_of_memory(
        conn: Connection, memory_id: str, namespace: str
    ) -> list[tuple[int, str]]:
        """(entity id, name) of the entities a memory mentions."""
        rows = conn.execute(
            "SELECT e.id, e.name FROM memories m JOIN memory_entities me ON "
            "me.memory_rowid = m.rowid JOIN entities e ON e.id = me.entity_id "
            "WHERE m.id = ? AND m.namespace = ?",
            (memory_id, namespace),
        ).fetchall()
        return [(int(i), str(n)) for i, n in rows]
