"""Writing a consolidation summary, inside the caller's transaction.

The summary is a new memory (kind 'summary') built from its sources' current text;
the sources are archived, linked ``summarizes`` from the summary, and stay readable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import clock
from ..compose import dense_text
from ..errors import NotFound
from ..store import NewRow, content_hash, indexed
from . import tiers
from .consolidate import pieces_from_evidence, render

if TYPE_CHECKING:
    from .api import LifecycleAPI

__all__ = ["approve_consolidate", "write_summary"]


def write_summary(
    host: LifecycleAPI, tx: Any, namespace: str, evidence: dict[str, Any], *, reason: str
) -> str:
    """Write the summary the evidence describes; NotFound if a source changed or left."""
    ids = [str(i) for i in evidence["sources"]]
    hashes = evidence.get("hashes", {})
    contents: dict[str, str] = {}
    importance = 0.0
    for memory_id in ids:
        found = tx.execute(
            "SELECT content, importance FROM memories WHERE id = ? AND namespace = ? "
            "AND status = 'active'", (memory_id, namespace),
        ).fetchone()
        if found is None or content_hash(str(found[0])) != hashes.get(memory_id):
            raise NotFound(
                f"memory {memory_id} changed or left since this consolidation was planned; "
                "reject it (maintenance plans it again if still warranted)"
            )
        contents[memory_id] = str(found[0])
        importance = max(importance, float(found[1]))
    pieces = pieces_from_evidence(evidence)
    text = render(pieces, contents, len(ids))
    row = NewRow(
        namespace=namespace, kind="summary", content=text, tags=list(evidence.get("tags", [])),
        importance=importance, source="consolidation",
        metadata={"sources": ids, "similarity": evidence.get("similarity")},
        observed_at=max(p.when for p in pieces) if pieces else None,
    )
    screening = host.trust.screen_rows([row])[0]
    rowid, summary_id = host.store_.insert(tx, row)
    host.trust.record_write(tx, summary_id, row, screening, action="consolidate")
    space = host.embedder.space
    if host.recaller.dense_live() and space is not None:
        vector = host.embedder.encode([dense_text(indexed(row))])[0]
        host.vector_tables.insert(tx, space, [(rowid, namespace, vector)],
                                  clock.format_time(clock.now()))
    for memory_id in ids:
        tiers.archive(tx, host.store_, memory_id, namespace, actor=host.actor, reason=reason,
                      detail={"summary": summary_id})
        tiers.add_link(tx, summary_id, memory_id, "summarizes", namespace)
    return summary_id


def approve_consolidate(tx: Any, item: Any, host: Any) -> None:
    write_summary(host, tx, item.namespace, item.evidence, reason=f"review item {item.id}")
