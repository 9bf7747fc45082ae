"""Review-queue lookups that read inside an item's JSON evidence, on SQLite.

``has_open_proposal`` searches a namespace's queue with ``json_extract`` (PostgreSQL's
twin: storage/postgres/review.py); ``has_item_for_fact`` parses the evidence in Python,
so its SQL is portable (storage/portable/review.py).
"""

from __future__ import annotations

from ..portable.review import has_item_for_fact
from ..protocol import Connection

__all__ = ["SqliteReviewLookups", "has_open_proposal"]


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
