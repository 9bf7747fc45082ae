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

from ..storage.portable.links import PortableLinks, drop_mentions
from ..storage.protocol import Connection
from ..storage.repositories import MemoryRows

__all__ = ["drop_mentions", "summaries_of"]


def summaries_of(
    tx: Connection, memory_id: str, namespace: str, store: MemoryRows
) -> list[tuple[int, str, list[str]]]:
    """(rowid, id, other source ids) of every summary that quotes ``memory_id``.

    Links are the record of consolidation; a summary's ``metadata.sources`` is read too,
    so a summary whose links were lost (or imported without them) is still found.
    """
    linked = PortableLinks.sources_of(tx, memory_id, "summarizes", namespace)
    out: list[tuple[int, str, list[str]]] = []
    for rowid, summary_id, metadata in store.summaries_citing(
        tx, namespace, memory_id, linked
    ):
        try:
            sources = [str(s) for s in json.loads(metadata).get("sources", [])]
        except (TypeError, ValueError, AttributeError):
            sources = []
        if summary_id in linked or memory_id in sources:
            out.append((rowid, summary_id, [s for s in sources if s != memory_id]))
    return out
