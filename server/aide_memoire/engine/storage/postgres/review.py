"""Review-queue lookups inside an item's JSON evidence, on PostgreSQL (the bundle's
``review``; SQLite's read it with ``json_extract``, storage/sqlite/review.py). Evidence is
JSON text, as in SQLite (schema.py): cast to ``json`` for the lookup."""

from __future__ import annotations

from ..protocol import Connection

__all__ = ["PostgresReviewLookups"]


class PostgresReviewLookups:
    """``review_items`` evidence lookups (a fact's conflict, a staged proposal)."""

    @staticmethod
    def has_item_for_fact(conn: Connection, kind: str, memory_id: str, fact_id: int) -> bool:
        """Whether an item of ``kind`` about ``memory_id`` already names ``fact_id`` as the
        fact it kept (any status: a decided conflict is not raised again)."""
        return conn.execute(
            "SELECT 1 FROM review_items WHERE kind = ? AND memory_id = ? "
            "AND evidence::json #>> '{kept,fact}' = ?",
            (kind, memory_id, str(int(fact_id))),
        ).fetchone() is not None

    @staticmethod
    def has_open_proposal(conn: Connection, namespace: str, kind: str, key: str) -> bool:
        """Whether a pending or rejected item of ``kind`` carries evidence ``key``."""
        return conn.execute(
            "SELECT 1 FROM review_items WHERE namespace = ? AND kind = ? AND status IN "
            "('pending', 'rejected') AND evidence::json ->> 'key' = ? LIMIT 1",
            (namespace, kind, key),
        ).fetchone() is not None
