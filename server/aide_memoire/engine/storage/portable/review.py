"""Review-queue reads both backends run as written."""

from __future__ import annotations

import json

from ..protocol import Connection

__all__ = ["has_item_for_fact"]


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
