"""Audited fields: every field that decides what recall returns or shows is chained too.

The audit log already records each memory's text hash. The fields beside it (status,
importance, kind, source, tags, validity, supersession, namespace, metadata, observed
time) decide whether and how a memory is recalled: flipping a held row to ``active``
with a SQL shell would make recall return it. So every write transaction that touched a
memory's row appends, just before it commits, one ``memory.fields`` event carrying a
seal of each touched memory's audited fields: a sha256 over them all, then a 4-hex hint
per field (only to name which field changed; detection rests on the full hash).

Which rows were touched is recorded by TEMP triggers that this engine creates on each
of its own connections: they see every change made through the engine, whatever code
path (a service, a migration's trigger, a maintenance step) made it, and they do not
exist on a connection someone else opens, so an edit made there leaves no seal and
``verify`` finds the memory's fields no longer match their last audited state.
Migration 12 seals every existing memory once (trust on first use, as the anchor).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..storage import seals
from ..storage.protocol import Connection
from ..storage.seals import ACTION, HINT, SEALED_FIELDS, all_detail, event_detail, seal_of

# What a seal is (its fields and hash) is storage's (storage/seals.py), since schema step
# 12 seals the memories already stored and storage imports no feature.
__all__ = ["ACTION", "SEALED_FIELDS", "all_detail", "describe", "detail_of", "ensure_triggers",
           "seal_of", "sealed_state", "touched_detail", "unsealed_rows"]


def ensure_triggers(conn: Connection) -> None:
    """Make this connection's TEMP triggers (idempotent; they live as long as it does)."""
    seals.ensure_touch_triggers(conn, SEALED_FIELDS)


def touched_detail(tx: Connection) -> tuple[dict[str, Any], str | None] | None:
    """The ``memory.fields`` detail sealing what this transaction touched, and the one
    namespace it touched (None for several); None when it touched no memory."""
    rowids = seals.take_touched(tx)
    if not rowids:
        return None
    detail, namespaces = event_detail(seals.field_rows(tx, SEALED_FIELDS, rowids))
    if not detail["memories"]:  # all deleted again in the same transaction
        return None
    return detail, next(iter(namespaces)) if len(namespaces) == 1 else None


def detail_of(rows: Iterable[tuple[str, str, tuple[Any, ...]]]) -> dict[str, Any] | None:
    """The ``memory.fields`` detail sealing these rows (``unsealed_rows`` shape)."""
    detail, _ = event_detail(rows)
    return detail if detail["memories"] else None


def describe(memory_id: str, values: tuple[Any, ...], sealed: str,
             fields: list[str]) -> str | None:
    """None when ``values`` still match ``sealed``; else a sentence naming the field(s)."""
    by_name = dict(zip(SEALED_FIELDS, values, strict=True))
    if any(field not in by_name for field in fields):
        return None  # sealed by a later version with fields this one does not know
    now = seal_of(memory_id, tuple(by_name[field] for field in fields), fields)
    if now == sealed:
        return None
    old_hints, new_hints = sealed.partition(":")[2], now.partition(":")[2]
    changed = [field for i, field in enumerate(fields)
               if old_hints[i * HINT:(i + 1) * HINT] != new_hints[i * HINT:(i + 1) * HINT]]
    if not changed:
        what, verb = "audited fields", "were"
    elif len(changed) == 1:
        what, verb = changed[0], "was"
    else:
        what, verb = ", ".join(changed[:-1]) + " and " + changed[-1], "were"
    return (f"memory {memory_id}'s {what} {verb} changed in the file, not through "
            "aide-memoire: it no longer matches its last audited change")


def sealed_state(events: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, list[str]]]:
    """memory id -> (its last seal, the fields it covers), from ``memory.fields`` details."""
    state: dict[str, tuple[str, list[str]]] = {}
    for detail in events:
        fields = [str(f) for f in detail.get("fields", [])]
        for memory_id, seal in dict(detail.get("memories", {})).items():
            state[str(memory_id)] = (str(seal), fields)
    return state


def unsealed_rows(conn: Connection) -> Iterator[tuple[str, str, tuple[Any, ...]]]:
    """Every memory's (id, namespace, audited field values), in rowid order."""
    return seals.field_rows(conn, SEALED_FIELDS)
