"""Moving a namespace's memories into another: how a project adopts its old namespace.

Earlier versions named a project's namespace ``project:<folder>``; now it is
``project:<folder>-<hash>`` (engine/core/projects.py). Adopting moves every row of the old
namespace, in one transaction: each table with a ``namespace`` column, the dense vectors
(their partition key), and the entity graph (an entity both namespaces know becomes one).
The audit log keeps its history and gains one ``adopt`` event. Keyword indexes need no
change (they are keyed by row, not by namespace).
"""

from __future__ import annotations

from ..storage.protocol import Database
from ..storage.sqlite import namespaces as sqlite_namespaces
from ..trust import audit

__all__ = ["adopt_namespace", "auto_adopt", "plain_candidates"]

HASH_CHARS = 6


def adopt_namespace(db: Database, old: str, new: str, *, actor: str) -> int:
    """Move every memory of ``old`` into ``new``; returns how many memories moved."""
    move = sqlite_namespaces.move_namespace
    if db.dialect == "postgres":  # its catalogue and partitions are its own
        from ..storage.postgres import namespaces as postgres_namespaces

        move = postgres_namespaces.move_namespace
    with db.write() as tx:
        moved = move(tx, old, new, vectors=db.vector_support().available)
        if not moved:
            return 0
        audit.append_event(tx, actor=actor, action="adopt", namespace=new,
                           detail={"from": old, "memories": moved})
    return moved


def plain_candidates(counts: dict[str, int], legacy: str, namespace: str) -> list[str]:
    """Other ``<legacy>-<hash>`` namespaces: other checkouts that had the same name."""
    stem = legacy + "-"
    return [ns for ns in counts if ns.startswith(stem) and ns != namespace
            and len(ns) - len(stem) == HASH_CHARS]


def auto_adopt(db: Database, counts: dict[str, int], legacy: str, namespace: str, *,
               actor: str) -> int:
    """Adopt ``legacy`` into an empty ``namespace`` when no other checkout of that name
    exists (docs/hooks.md); returns how many memories moved."""
    if not counts.get(legacy) or counts.get(namespace) or legacy == namespace:
        return 0
    if plain_candidates(counts, legacy, namespace):
        return 0
    return adopt_namespace(db, legacy, namespace, actor=actor)
