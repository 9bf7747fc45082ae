"""Writing a consolidation summary through the write pipeline, in the caller's transaction.

The summary is a new memory (kind 'summary') built from its sources' current text;
the sources are archived, linked ``summarizes`` from the summary, and stay readable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import NotFound
from ..store import NewRow, content_hash
from . import tiers
from .consolidate import pieces_from_evidence, render

if TYPE_CHECKING:
    from ..context import EngineContext
    from ..data.protocol import Connection
    from ..data.repositories import MemoryRows
    from ..pipeline import Prepared
    from ..trust.models import ReviewItem

__all__ = ["approve_consolidate", "summary_row", "write_summary"]


def summary_row(
    store: MemoryRows, conn: Connection, namespace: str, evidence: dict[str, Any]
) -> NewRow:
    """The summary the evidence describes; NotFound if a source changed or left."""
    ids = [str(i) for i in evidence["sources"]]
    hashes = evidence.get("hashes", {})
    contents: dict[str, str] = {}
    importance = 0.0
    for memory_id in ids:
        found = store.active_content_importance(conn, memory_id, namespace)
        if found is None or content_hash(found[0]) != hashes.get(memory_id):
            raise NotFound(
                f"memory {memory_id} changed or left since this consolidation was planned; "
                "reject it (maintenance plans it again if still warranted)"
            )
        contents[memory_id] = found[0]
        importance = max(importance, found[1])
    pieces = pieces_from_evidence(evidence)
    text = render(pieces, contents, len(ids))
    return NewRow(
        namespace=namespace, kind="summary", content=text, tags=list(evidence.get("tags", [])),
        importance=importance, source="consolidation",
        metadata={"sources": ids, "similarity": evidence.get("similarity")},
        observed_at=max(p.when for p in pieces) if pieces else None,
    )


def write_summary(
    ctx: EngineContext, tx: Connection, namespace: str, evidence: dict[str, Any], *,
    reason: str,
    prepared: Prepared | None = None,
) -> str:
    """Write the summary through the write pipeline in ``tx`` (screened, audited, with
    facts) and archive its sources. ``prepared`` (from :func:`summary_row` read before the
    lock) spares encoding under it; it is used only if the sources are still as read."""
    row = summary_row(ctx.store, tx, namespace, evidence)
    if prepared is None or prepared.rows[0].content != row.content:
        prepared = ctx.pipeline.prepare([row])  # the review path: decided inside its tx
    # Near duplicates skipped: the summary resembles the sources it is about to archive.
    result = ctx.pipeline.commit(tx, prepared, action="consolidate",
                                  skip_hooks=("near_duplicates",))
    summary_id = result.ids[0]
    for memory_id in [str(i) for i in evidence["sources"]]:
        tiers.archive(tx, ctx.store, memory_id, namespace, actor=ctx.actor, reason=reason,
                      detail={"summary": summary_id})
        tiers.add_link(tx, summary_id, memory_id, "summarizes", namespace)
    return summary_id


def approve_consolidate(tx: Connection, item: ReviewItem, ctx: EngineContext) -> None:
    write_summary(ctx, tx, item.namespace, item.evidence, reason=f"review item {item.id}")
