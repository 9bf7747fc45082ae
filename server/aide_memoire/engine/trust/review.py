"""The review queue's rows: held writes now, maintenance proposals later (same table).

A decision is compare-and-set on ``status = 'pending'``: of two deciders, one wins and
the other is told the item was already decided.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ..core import clock
from ..storage.protocol import Connection
from ..storage.trust import ReviewQueue
from .models import ReviewItem

__all__ = [
    "close_for_memory", "expire_due", "get_item", "list_items", "open_item", "settle", "stamp",
]



def open_item(
    tx: Connection,
    *,
    namespace: str,
    kind: str,
    memory_id: str | None,
    evidence: dict[str, Any],
    expires_at: datetime | None = None,
) -> str:
    """Add a pending item; returns its id."""
    item_id = clock.new_id()
    ReviewQueue.insert(tx, (
        item_id, namespace, kind, memory_id,
        json.dumps(evidence, ensure_ascii=False, sort_keys=True),
        clock.format_time(clock.now()),
        clock.format_time(expires_at) if expires_at else None,
    ))
    return item_id


def stamp(value: str) -> datetime:
    parsed = clock.parse_stored(value)
    assert parsed is not None
    return parsed


def _item(values: tuple[Any, ...]) -> ReviewItem:
    (item_id, namespace, kind, memory_id, content, evidence, status, created, expires,
     decided, decided_by, note) = values
    return ReviewItem(
        id=item_id, namespace=namespace, kind=kind, memory_id=memory_id, content=content,
        evidence=json.loads(evidence), status=status, created_at=stamp(created),
        expires_at=clock.parse_stored(expires), decided_at=clock.parse_stored(decided),
        decided_by=decided_by, note=note,
    )


def list_items(
    conn: Connection, *, namespace: str | None, status: str, kind: str | None, limit: int
) -> list[ReviewItem]:
    """Items in one status, oldest first; pending ones past their expiry are left out."""
    unexpired = clock.format_time(clock.now()) if status == "pending" else None
    rows = ReviewQueue.select(conn, status=status, namespace=namespace, kind=kind,
                              unexpired_at=unexpired, limit=limit)
    return [_item(values) for values in rows]


def get_item(conn: Connection, item_id: str) -> ReviewItem | None:
    found = ReviewQueue.get(conn, item_id)
    return _item(found) if found else None


def settle(
    tx: Connection,
    item_id: str,
    status: str,
    *,
    actor: str,
    note: str | None,
) -> str | None:
    """Compare-and-set a pending, unexpired item to ``status``; its decided_at, or None."""
    stamp = clock.format_time(clock.now())
    won = ReviewQueue.settle(tx, item_id, status, at=stamp, actor=actor, note=note)
    return stamp if won else None


def close_for_memory(tx: Connection, memory_id: str, *, actor: str, note: str) -> None:
    """A forgotten memory's pending items can no longer be decided: mark them expired."""
    ReviewQueue.expire_for_memory(
        tx, memory_id, at=clock.format_time(clock.now()), actor=actor, note=note
    )


def expire_due(tx: Connection, *, actor: str, item_id: str | None = None) -> int:
    """Pending items past their expiry (or just ``item_id``, if it is) become 'expired'
    (silence is never consent)."""
    return ReviewQueue.expire_due(
        tx, at=clock.format_time(clock.now()), actor=actor, item_id=item_id
    )
