"""Review-queue lookups that read inside an item's JSON evidence (``json_extract``)."""

from __future__ import annotations

from ..protocol import Connection

__all__ = ["has_item_for_fact"]


def has_item_for_fact(conn: Connection, kind: str, memory_id: str, fact_id: int) -> bool:
    """Whether an item of ``kind`` about ``memory_id`` already names ``fact_id`` as the
    fact it kept (any status: a decided conflict is not raised again)."""
    found = conn.execute(
        "SELECT 1 FROM review_items WHERE kind = ? AND memory_id = ? "
        "AND json_extract(evidence, '$.kept.fact') = ?",
        (kind, memory_id, fact_id),
    ).fetchone()
    return found is not None
