"""Review-queue lookups that read inside an item's JSON evidence.

``has_item_for_fact`` reads the few items of one memory and parses their evidence here,
so its SQL is portable and the facts feature calls it on either backend;
``has_open_proposal`` searches a namespace's queue with ``json_extract`` (PostgreSQL's
twin: storage/postgres/review.py).
"""

from __future__ import annotations

import json

from ..protocol import Connection

__all__ = ["SqliteReviewLookups", "has_item_for_fact", "has_open_proposal"]


def has_item_for_fact(conn: Connection, kind: str, memory_id: str, fact_id: int) -> bool:
    """Whether an item of ``kind`` about ``memory_id`` already names ``fact_id`` as the
    fact it kept (any status: a decided conflict is not raised again)."""
    for (evidence,) in conn.execute(
        "SELECT evidence FROM review_items WHERE kind = ? AND memory_id = ?", (kind, memory_id)
    ):
        try:
            kept = json.loads(evidence).get("kept")
        except (TypeError, ValueError, AttributeError):
            continue  # evidence that is not an object names no fact
        if isinstance(kept, dict) and kept.get("fact") == fact_id:
            return True
    return False


def has_open_proposal(conn: Connection, namespace: str, kind: str, key: str) -> bool:
    """Whether a pending or rejected item of ``kind`` carries evidence ``key`` (a person
    said no, or will say: maintenance does not stage it again)."""
    return conn.execute(
        "SELECT 1 FROM review_items WHERE namespace = ? AND kind = ? AND status IN "
        "('pending', 'rejected') AND json_extract(evidence, '$.key') = ? LIMIT 1",
        (namespace, kind, key),
    ).fetchone() is not None


class SqliteReviewLookups:
    """The two lookups as the bundle's ``review`` repository."""

    @staticmethod
    def has_item_for_fact(conn: Connection, kind: str, memory_id: str, fact_id: int) -> bool:
        return has_item_for_fact(conn, kind, memory_id, fact_id)

    @staticmethod
    def has_open_proposal(conn: Connection, namespace: str, kind: str, key: str) -> bool:
        return has_open_proposal(conn, namespace, kind, key)
