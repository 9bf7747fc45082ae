"""Forgetting follows what was derived from a memory's text.

A memory's text lives on in three kinds of derived data:

- consolidation summaries quote their sources verbatim. Forgetting a source forgets
  every summary of it too; the summary's other sources, archived when it was made,
  return to the active tier so that nothing else is lost;
- facts (deleted by a trigger with their memory, and when its text is edited);
- entities and graph edges: an entity's display name and its edges come from the text
  that mentioned it. When no remaining memory mentions an entity it goes, with its
  edges; an edited memory's mentions are dropped and extracted again from the new text.

Everything here runs inside the caller's write transaction.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["drop_mentions", "summaries_of"]


def summaries_of(tx: Any, memory_id: str, namespace: str) -> list[tuple[int, str, list[str]]]:
    """(rowid, id, other source ids) of every summary that quotes ``memory_id``.

    Links are the record of consolidation; a summary's ``metadata.sources`` is read too,
    so a summary whose links were lost (or imported without them) is still found.
    """
    linked = {str(r[0]) for r in tx.execute(
        "SELECT source_id FROM memory_links WHERE target_id = ? AND kind = 'summarizes' "
        "AND namespace = ?", (memory_id, namespace))}
    out: list[tuple[int, str, list[str]]] = []
    needle = json.dumps(memory_id)
    for rowid, summary_id, metadata in tx.execute(
        "SELECT rowid, id, metadata FROM memories WHERE namespace = ? AND kind = 'summary' "
        "AND (id IN (SELECT value FROM json_each(?)) OR instr(metadata, ?) > 0)",
        (namespace, json.dumps(sorted(linked)), needle),
    ):
        try:
            sources = [str(s) for s in json.loads(metadata).get("sources", [])]
        except (TypeError, ValueError, AttributeError):
            sources = []
        if str(summary_id) in linked or memory_id in sources:
            out.append((int(rowid), str(summary_id), [s for s in sources if s != memory_id]))
    return out


def drop_mentions(tx: Any, rowid: int) -> None:
    """Remove a memory's entity mentions; entities no other memory mentions go, with edges."""
    orphans = [int(r[0]) for r in tx.execute(
        "SELECT me.entity_id FROM memory_entities me WHERE me.memory_rowid = ? "
        "AND NOT EXISTS (SELECT 1 FROM memory_entities o WHERE o.entity_id = me.entity_id "
        "AND o.memory_rowid != me.memory_rowid)", (rowid,))]
    tx.execute("DELETE FROM memory_entities WHERE memory_rowid = ?", (rowid,))
    if orphans:
        ids = json.dumps(orphans)
        tx.execute("DELETE FROM entity_edges WHERE a IN (SELECT value FROM json_each(?)) "
                   "OR b IN (SELECT value FROM json_each(?))", (ids, ids))
        tx.execute("DELETE FROM entities WHERE id IN (SELECT value FROM json_each(?))", (ids,))
