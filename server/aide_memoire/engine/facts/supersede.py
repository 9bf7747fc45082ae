"""Supersession: a newer value closes the older one, never deletes it.

Facts of a single-valued slot (same namespace, subject, predicate) form a timeline
ordered by when each became true: every fact is valid until the next fact with a
different value, which supersedes it. Replacements ("switched from A to B") and
retractions ("no longer use A") close facts of any slot. A memory whose facts are all
closed by other memories is closed with them: ``valid_to``, ``superseded_by`` and, unless
it is a conversation turn (kept as said), status ``superseded``. Two different values
asserted for the same moment cannot be ordered by rules: the newer write wins for now
and a ``fact_conflict`` proposal asks a person.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..core import clock
from ..storage.portable.review import has_item_for_fact
from ..storage.protocol import Connection
from ..trust import audit, review
from .taxonomy import category_of

if TYPE_CHECKING:
    from ..storage.repositories import MemoryRows

__all__ = ["CONFLICT_KIND", "Closing", "close_matching", "rebuild_slot", "settle_memories",
           "supersede_memory"]

CONFLICT_KIND = "fact_conflict"
CONFLICT_DAYS = 30


@dataclass(frozen=True)
class Closing:
    """A fact row's end: when, by which fact (if a value replaced it), by which memory."""

    valid_to: str | None
    superseded_by: int | None
    ended_by: str | None


def rebuild_slot(tx: Connection, namespace: str, subject: str, predicate: str) -> set[str]:
    """Recompute a single-valued slot's timeline; returns memory ids whose facts changed."""
    rows = tx.execute(
        "SELECT id, object, valid_from, valid_to, superseded_by, ended_by, memory_id "
        "FROM facts WHERE namespace = ? AND subject = ? AND predicate = ? "
        "ORDER BY valid_from, id",
        (namespace, subject, predicate),
    ).fetchall()
    changed: set[str] = set()
    for index, (fid, obj, start, end, by, ended, memory_id) in enumerate(rows):
        nxt = next((r for r in rows[index + 1 :] if r[1] != obj), None)
        if by is None and ended is not None and (nxt is None or str(end) <= str(nxt[2])):
            want = Closing(end, None, ended)  # closed by a retraction: stays closed
        elif nxt is not None:
            want = Closing(str(nxt[2]), int(nxt[0]), str(nxt[6]))
            if nxt[2] == start:
                _conflict(tx, namespace, subject, predicate, rows[index], nxt)
        else:
            want = Closing(None, None, None)
        if (end, by, ended) != (want.valid_to, want.superseded_by, want.ended_by):
            tx.execute(
                "UPDATE facts SET valid_to = ?, superseded_by = ?, ended_by = ? WHERE id = ?",
                (want.valid_to, want.superseded_by, want.ended_by, fid),
            )
            changed.add(str(memory_id))
    return changed


def _conflict(
    tx: Connection,
    namespace: str,
    subject: str,
    predicate: str,
    old: Any,
    new: Any,
) -> None:
    """Stage a proposal once per pair of facts asserted for the same moment."""
    evidence = {
        "subject": subject, "predicate": predicate, "at": str(new[2]),
        "kept": {"fact": int(new[0]), "object": str(new[1]), "memory_id": str(new[6])},
        "closed": {"fact": int(old[0]), "object": str(old[1]), "memory_id": str(old[6])},
        "why": "two values for a single-valued slot at the same time; the newer write "
        "was kept. Approve to keep it, reject to drop it and restore the other.",
    }
    if not has_item_for_fact(tx, CONFLICT_KIND, str(new[6]), int(new[0])):
        review.open_item(
            tx, namespace=namespace, kind=CONFLICT_KIND, memory_id=str(new[6]),
            evidence=evidence, expires_at=clock.now() + timedelta(days=CONFLICT_DAYS),
        )


def close_matching(
    tx: Connection, namespace: str, subject: str, predicate: str, obj: str | None, *,
    at: str, fact_id: int | None, memory_id: str, same_category_as: str | None = None,
) -> set[str]:
    """Close open facts of ``subject`` that began by ``at``: those with object ``obj``, or
    (``obj`` None) those whose object shares a category with ``same_category_as``."""
    base = predicate.split(":")[0]
    rows = tx.execute(
        "SELECT id, object, predicate, memory_id FROM facts WHERE namespace = ? AND subject = ? "
        "AND valid_to IS NULL AND valid_from <= ? AND memory_id != ? "
        "AND (predicate = ? OR predicate LIKE 'prefers:%' OR predicate IN ('uses', 'likes'))",
        (namespace, subject, at, memory_id, base),
    ).fetchall()
    category = category_of(same_category_as) if same_category_as else None
    changed: set[str] = set()
    for fid, fobj, _pred, fmemory in rows:
        if obj is not None:
            hit = fobj == obj
        else:
            hit = category is not None and category_of(fobj) == category and fobj != (
                same_category_as
            )
        if not hit:
            continue
        tx.execute(
            "UPDATE facts SET valid_to = ?, superseded_by = ?, ended_by = ? WHERE id = ?",
            (at, fact_id, memory_id, fid),
        )
        changed.add(str(fmemory))
    return changed


def settle_memories(
    tx: Connection, rows: MemoryRows, namespace: str, memory_ids: set[str], *, actor: str
) -> None:
    """Close each memory whose facts are now all closed by another memory; one partly
    closed only names its replacement."""
    for memory_id in sorted(memory_ids):
        facts = tx.execute(
            "SELECT valid_to, ended_by FROM facts WHERE namespace = ? AND memory_id = ?",
            (namespace, memory_id),
        ).fetchall()
        closers = [(str(end), str(by)) for end, by in facts if by and by != memory_id]
        if not closers:
            continue
        end, by = max(closers)
        if len(closers) < len(facts):
            # Partly out of date: it stays current but names what replaced a part of it,
            # so recall ranks it below that.
            rows.mark_superseded_by(tx, memory_id, namespace, by)
            continue
        found = rows.kind_status_replacement(tx, memory_id, namespace)
        if found is None or found[1] not in ("active", "superseded") or found[2] == by:
            continue
        status = found[1] if found[0] == "turn" else "superseded"
        # A turn stays a record of what was said: it keeps its status and validity and
        # only names what replaced it (recall ranks it below that).
        valid_to = None if found[0] == "turn" else end
        rows.set_superseded(tx, memory_id, namespace, status=status, valid_to=valid_to, by=by,
                            at=clock.format_time(clock.now()))
        audit.append_event(
            tx, actor=actor, action="supersede", namespace=namespace, memory_id=memory_id,
            detail={"by": by, "rule": "facts"},
        )


def supersede_memory(
    tx: Connection, rows: MemoryRows, namespace: str, old_id: str, new_id: str, at: datetime,
    *, actor: str,
) -> None:
    """``store(..., supersedes=old_id)``: close the old memory and its open facts."""
    stamp = clock.format_time(at)
    rows.retire_replaced(tx, old_id, namespace, valid_to=stamp, by=new_id,
                         at=clock.format_time(clock.now()))
    replacements = {
        (str(s), str(p)): int(i)
        for i, s, p in tx.execute(
            "SELECT id, subject, predicate FROM facts WHERE namespace = ? AND memory_id = ?",
            (namespace, new_id),
        )
    }
    for fid, subject, predicate in tx.execute(
        "SELECT id, subject, predicate FROM facts WHERE namespace = ? AND memory_id = ? "
        "AND valid_to IS NULL",
        (namespace, old_id),
    ).fetchall():
        tx.execute(
            "UPDATE facts SET valid_to = ?, superseded_by = ?, ended_by = ? WHERE id = ?",
            (stamp, replacements.get((str(subject), str(predicate))), new_id, fid),
        )
    audit.append_event(
        tx, actor=actor, action="supersede", namespace=namespace, memory_id=old_id,
        detail={"by": new_id, "rule": "explicit"},
    )
