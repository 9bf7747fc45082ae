"""The review queue's rows: held writes now, maintenance proposals later (same table).

A decision is compare-and-set on ``status = 'pending'``: of two deciders, one wins and
the other is told the item was already decided.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from .. import clock
from .models import ReviewItem

__all__ = [
    "close_for_memory", "expire_due", "get_item", "list_items", "open_item", "settle", "stamp",
]

_FIELDS = (
    "r.id, r.namespace, r.kind, r.memory_id, m.content, r.evidence, r.status, r.created_at, "
    "r.expires_at, r.decided_at, r.decided_by, r.note"
)
_FROM = "FROM review_items r LEFT JOIN memories m ON m.id = r.memory_id"


def open_item(
    tx: Any,
    *,
    namespace: str,
    kind: str,
    memory_id: str | None,
    evidence: dict[str, Any],
    expires_at: datetime | None = None,
) -> str:
    """Add a pending item; returns its id."""
    item_id = clock.new_id()
    tx.execute(
        "INSERT INTO review_items (id, namespace, kind, memory_id, evidence, status, created_at, "
        "expires_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
        (
            item_id, namespace, kind, memory_id,
            json.dumps(evidence, ensure_ascii=False, sort_keys=True),
            clock.format_time(clock.now()),
            clock.format_time(expires_at) if expires_at else None,
        ),
    )
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
    conn: Any, *, namespace: str | None, status: str, kind: str | None, limit: int
) -> list[ReviewItem]:
    """Items in one status, oldest first; pending ones past their expiry are left out."""
    clauses, params = ["r.status = ?"], [status]
    if namespace is not None:
        clauses.append("r.namespace = ?")
        params.append(namespace)
    if kind is not None:
        clauses.append("r.kind = ?")
        params.append(kind)
    if status == "pending":
        clauses.append("(r.expires_at IS NULL OR r.expires_at > ?)")
        params.append(clock.format_time(clock.now()))
    rows = conn.execute(
        f"SELECT {_FIELDS} {_FROM} WHERE {' AND '.join(clauses)} "
        "ORDER BY r.created_at, r.id LIMIT ?",
        [*params, limit],
    )
    return [_item(tuple(values)) for values in rows]


def get_item(conn: Any, item_id: str) -> ReviewItem | None:
    found = conn.execute(f"SELECT {_FIELDS} {_FROM} WHERE r.id = ?", (item_id,)).fetchone()
    return _item(tuple(found)) if found else None


def settle(tx: Any, item_id: str, status: str, *, actor: str, note: str | None) -> str | None:
    """Compare-and-set a pending, unexpired item to ``status``; its decided_at, or None."""
    stamp = clock.format_time(clock.now())
    cursor = tx.execute(
        "UPDATE review_items SET status = ?, decided_at = ?, decided_by = ?, note = ? "
        "WHERE id = ? AND status = 'pending' AND (expires_at IS NULL OR expires_at > ?)",
        (status, stamp, actor, note, item_id, stamp),
    )
    return stamp if cursor.rowcount == 1 else None


def close_for_memory(tx: Any, memory_id: str, *, actor: str, note: str) -> None:
    """A forgotten memory's pending items can no longer be decided: mark them expired."""
    tx.execute(
        "UPDATE review_items SET status = 'expired', decided_at = ?, decided_by = ?, note = ? "
        "WHERE memory_id = ? AND status = 'pending'",
        (clock.format_time(clock.now()), actor, note, memory_id),
    )


def expire_due(tx: Any, *, actor: str, item_id: str | None = None) -> int:
    """Pending items past their expiry (or just ``item_id``, if it is) become 'expired'
    (silence is never consent)."""
    stamp = clock.format_time(clock.now())
    only = " AND id = ?" if item_id is not None else ""
    cursor = tx.execute(
        "UPDATE review_items SET status = 'expired', decided_at = ?, decided_by = ?, "
        "note = 'expired unreviewed' WHERE status = 'pending' AND expires_at IS NOT NULL "
        f"AND expires_at <= ?{only}",
        (stamp, actor, stamp, *([item_id] if item_id is not None else [])),
    )
    return int(cursor.rowcount)
