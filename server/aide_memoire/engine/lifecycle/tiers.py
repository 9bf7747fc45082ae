"""Tiers and links: archiving (the cold tier) and restoring, inside the caller's transaction.

Archiving never deletes: the row keeps its text and indexes, recall leaves it out
unless asked (``include_archived``), ``get`` and ``as_of`` still read it. Every change
is an audit event.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .. import clock
from ..store import Store
from ..trust import audit

__all__ = ["add_link", "archive", "links_of", "restore"]


def add_link(
    tx: Any, source_id: str, target_id: str, kind: str, namespace: str,
    score: float | None = None,
) -> None:
    tx.execute(
        "INSERT OR IGNORE INTO memory_links (source_id, target_id, kind, score, namespace, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (source_id, target_id, kind, score, namespace, clock.format_time(clock.now())),
    )


def links_of(conn: Any, memory_id: str) -> list[tuple[str, str, str, float | None]]:
    """(source, target, kind, score) of every link touching a memory."""
    return [
        (str(s), str(t), str(k), None if sc is None else float(sc))
        for s, t, k, sc in conn.execute(
            "SELECT source_id, target_id, kind, score FROM memory_links "
            "WHERE source_id = ? OR target_id = ? ORDER BY created_at",
            (memory_id, memory_id),
        )
    ]


def archive(
    tx: Any, store: Store, memory_id: str, namespace: str, *, actor: str, reason: str,
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


def restore(tx: Any, store: Store, memory_id: str, namespace: str, *, actor: str) -> bool:
    """Promote an archived memory back to active (and valid again); False if not archived."""
    return _move(
        tx, store, memory_id, namespace, "archived", {"status": "active", "valid_to": None},
        actor=actor, action="lifecycle.restore", detail=None,
    )


def _move(
    tx: Any, store: Store, memory_id: str, namespace: str, status: str, fields: dict[str, Any],
    *, actor: str, action: str, detail: dict[str, Any] | None,
) -> bool:
    """Update a memory that has ``status`` and audit it; False if it is not in that status."""
    found = tx.execute(
        "SELECT rowid, content_hash FROM memories WHERE id = ? AND namespace = ? AND status = ?",
        (memory_id, namespace, status),
    ).fetchone()
    if found is None:
        return False
    store.update_fields(tx, int(found[0]), fields)
    audit.append_event(
        tx, actor=actor, action=action, namespace=namespace, memory_id=memory_id,
        content_hash=str(found[1]), detail=detail,
    )
    return True
