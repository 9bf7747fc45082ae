"""Writing a consolidation summary through the write pipeline, in the caller's transaction.

The summary is a new memory (kind 'summary') built from its sources' current text;
the sources are archived, linked ``summarizes`` from the summary, and stay readable.

The model never runs under the writer's lock: the summary is screened and encoded
from a read (``prepare_summary``), and the transaction checks that its sources are
still what was encoded, else refuses and writes nothing (every other writer of the
store would otherwise wait for a forward pass: SQLite's one writer, a PostgreSQL row
lock).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core.errors import NotFound, StoreConflict
from ..storage.store import NewRow, content_hash
from . import tiers
from .consolidate import pieces_from_evidence, render

if TYPE_CHECKING:
    from ..runtime.context import EngineContext, ProposalHandler
    from ..runtime.pipeline import Prepared
    from ..storage.protocol import Connection
    from ..storage.repositories import MemoryRows
    from ..trust.models import ReviewItem

__all__ = ["approve_consolidate", "prepare_consolidate", "prepare_summary", "summary_row",
           "write_summary"]


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


def prepare_summary(ctx: EngineContext, namespace: str, evidence: dict[str, Any]) -> Prepared:
    """The summary screened and encoded, from a read: no lock is held meanwhile.
    NotFound if a source changed or left since the plan."""
    with ctx.db.read() as conn:
        row = summary_row(ctx.store, conn, namespace, evidence)
    return ctx.pipeline.prepare([row])


def write_summary(
    ctx: EngineContext, tx: Connection, namespace: str, evidence: dict[str, Any], *,
    reason: str, prepared: Prepared,
) -> str:
    """Write the summary through the write pipeline in ``tx`` (screened, audited, with
    facts) and archive its sources. ``prepared`` (``prepare_summary``, before the lock) is
    written only if the sources are still what it was built from: else nothing is
    written (NotFound when a source changed since the plan, StoreConflict when the text
    to write is not the one encoded)."""
    row = summary_row(ctx.store, tx, namespace, evidence)
    encoded = prepared.rows[0] if len(prepared.rows) == 1 else None
    if encoded is None or encoded.content != row.content:
        raise StoreConflict(
            "the sources of this consolidation changed while its summary was being "
            "encoded; nothing was written. Decide it again"
        )
    # Same text, so the same vector and screening; fields read now (a source's importance
    # raised meanwhile) are taken from this transaction's row.
    prepared = replace(prepared, rows=[row])
    # Near duplicates skipped: the summary resembles the sources it is about to archive.
    result = ctx.pipeline.commit(tx, prepared, action="consolidate",
                                  skip_hooks=("near_duplicates",))
    summary_id = result.ids[0]
    for memory_id in [str(i) for i in evidence["sources"]]:
        tiers.archive(tx, ctx.store, memory_id, namespace, actor=ctx.actor, reason=reason,
                      detail={"summary": summary_id})
        tiers.add_link(tx, summary_id, memory_id, "summarizes", namespace)
    return summary_id


def prepare_consolidate(item: ReviewItem, ctx: EngineContext) -> ProposalHandler:
    """Approving a consolidation: encode now, before the deciding transaction opens."""
    prepared = prepare_summary(ctx, item.namespace, item.evidence)

    def approve(tx: Connection, decided: ReviewItem, ctx: EngineContext) -> None:
        write_summary(ctx, tx, decided.namespace, decided.evidence,
                      reason=f"review item {decided.id}", prepared=prepared)

    return approve


def approve_consolidate(tx: Connection, item: ReviewItem, ctx: EngineContext) -> None:
    """The approval when nothing could be prepared before the transaction (a source had
    changed then): never encodes under the lock; refuses with the reason."""
    summary_row(ctx.store, tx, item.namespace, item.evidence)  # NotFound if still changed
    raise StoreConflict(
        f"the sources of review item {item.id} changed while it was being approved; "
        "nothing was written. Decide it again"
    )
