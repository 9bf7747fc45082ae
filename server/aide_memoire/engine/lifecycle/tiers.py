"""Tiers and links: archiving (the cold tier) and restoring, inside the caller's transaction.

Archiving never deletes: the row keeps its text and indexes, recall leaves it out
unless asked (``include_archived``), ``get`` and ``as_of`` still read it. Every change
is an audit event.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..core import clock
from ..storage.portable.links import PortableLinks
from ..storage.protocol import Connection
from ..storage.repositories import MemoryRows
from ..trust import audit

__all__ = ["add_link", "archive", "links_of", "restore"]


def add_link(
    tx: Connection, source_id: str, target_id: str, kind: str, namespace: str,
    score: float | None = None,
) -> None:
    PortableLinks.add(
        tx, (source_id, target_id, kind, score, namespace, clock.format_time(clock.now()))
    )


def links_of(conn: Connection, memory_id: str) -> list[tuple[str, str, str, float | None]]:
    """(source, target, kind, score) of every link touching a memory."""
    return PortableLinks.of(conn, memory_id)


def archive(
    tx: Connection, store: MemoryRows, memory_id: str, namespace: str, *, actor: str, reason: str,
    closes: bool = True, valid_to: datetime | None = None, detail: dict[str, Any] | None = None,
) -> bool:
    """Move an active memory to the cold tier; False if it was not active.

    ``closes`` also ends its validity (``valid_to``), so ``as_of`` an earlier time
    still sees it and a later time does not; a demotion leaves it valid.
    """
    fields: dict[str, Any] = {"status": "archived"}
    if closes:
        fields["valid_to"] = valid_to or clock.now()
    return _move(
        tx, store, memory_id, namespace, "active", fields, actor=actor,
        action="lifecycle.archive", detail={"reason": reason, **(detail or {})},
    )


def restore(
    tx: Connection, store: MemoryRows, memory_id: str, namespace: str, *, actor: str
) -> bool:
    """Promote an archived memory back to active (and valid again); False if not archived."""
    return _move(
        tx, store, memory_id, namespace, "archived", {"status": "active", "valid_to": None},
        actor=actor, action="lifecycle.restore", detail=None,
    )


def _move(
    tx: Connection, store: MemoryRows, memory_id: str, namespace: str, status: str,
    fields: dict[str, Any], *, actor: str, action: str, detail: dict[str, Any] | None,
) -> bool:
    """Update a memory that has ``status`` and audit it; False if it is not in that status."""
    found = store.rowid_hash_in_status(tx, memory_id, namespace, status)
    if found is None:
        return False
    store.update_fields(tx, found[0], fields)
    audit.append_event(
        tx, actor=actor, action=action, namespace=namespace, memory_id=memory_id,
        content_hash=str(found[1]), detail=detail,
    )
    return True
