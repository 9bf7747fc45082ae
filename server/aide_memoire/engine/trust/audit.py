"""The append-only audit log: every change is an event chained to the one before by sha256.

An event's hash is sha256 over the previous hash and a canonical JSON of the event
(its sequence number included), so an edited, removed or reordered event breaks the
chain at the first bad link. ``audit_head`` keeps the last link, so events cut off
the end are caught too, and appending reads one row instead of scanning the log.
Events are appended inside the transaction of the change they record.

Two checks reach outside the table (see anchor.py and ``verify``): the head is also
anchored in a keyed file beside the store, so emptying or cutting the log is found;
each memory's text must hash to what its last audited change recorded, and its other
audited fields (status, importance, kind, source, tags, validity, supersession... see
seal.py) to their last ``memory.fields`` seal, so a row edited directly in the file is
found, and named with the field. An event's detail must be exactly its canonical JSON
(one value per key), or the hash would cover one reading and a parser see another.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from ..storage.protocol import Connection
from ..storage.trust import GENESIS, AuditLog, append_event, canonical, event_hash
from . import seal
from .anchor import AnchorState
from .models import AuditEvent, AuditReport
from .review import stamp

# The chain's format (GENESIS, event_hash, append_event) is storage's: a schema step
# writes an event too (storage/trust.py); every feature appends through this module.
__all__ = ["GENESIS", "append_event", "event_hash", "history", "seal_touched",
           "seal_unsealed", "verify"]


def seal_touched(tx: Connection, *, actor: str) -> None:
    """Before a commit: one ``memory.fields`` event sealing the memories this
    transaction inserted or changed (seal.py); nothing when it touched none."""
    found = seal.touched_detail(tx)
    if found is not None:
        append_event(tx, actor=actor, action=seal.ACTION, namespace=found[1], detail=found[0])


def seal_unsealed(tx: Connection, *, actor: str) -> int:
    """Seal the memories no ``memory.fields`` event covers yet (rows copied in by
    migrate-store from a backend that does not seal); a memory whose seal no longer
    matches is left as it is, so that an edit is reported, never laundered. Returns how
    many were sealed."""
    details: list[dict[str, Any]] = []
    _check(AuditLog.events(tx), details)
    state = seal.sealed_state(details)
    detail = seal.detail_of(r for r in seal.unsealed_rows(tx) if r[0] not in state)
    if detail is None:
        return 0
    append_event(tx, actor=actor, action=seal.ACTION, detail=detail)
    return len(detail["memories"])


def _event(values: tuple[Any, ...]) -> AuditEvent:
    seq, at, actor, action, namespace, memory_id, content_hash, detail, prev_hash, digest = values
    return AuditEvent(
        seq=seq,
        at=stamp(at),
        actor=actor,
        action=action,
        namespace=namespace,
        memory_id=memory_id,
        content_hash=content_hash,
        detail=json.loads(detail),
        prev_hash=prev_hash,
        hash=digest,
    )


def history(conn: Connection, memory_id: str) -> list[AuditEvent]:
    """Every event about one memory, oldest first."""
    return [_event(values) for values in AuditLog.events(conn, memory_id)]


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


def _detail_problem(seq: int, detail: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The event's detail parsed, or why it cannot be trusted: it must be exactly the
    canonical JSON it was hashed as, one value per key (a parser that keeps the last of
    two keys would read another detail than the hash covered)."""
    try:
        parsed = json.loads(detail, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as exc:
        return None, (f"event {seq}'s detail field names the key {str(exc)!r} twice: "
                      "it was edited in the file")
    except (TypeError, ValueError):
        return None, f"event {seq}'s detail field is not valid JSON: it was damaged or edited"
    if not isinstance(parsed, dict) or canonical(parsed) != detail:
        return None, (f"event {seq}'s detail field is not in the canonical form it was "
                      "written in: it was edited in the file")
    return parsed, None


def _check(rows: Iterable[tuple[Any, ...]], sealed: list[dict[str, Any]] | None = None,
           ) -> tuple[int, int | None, str | None, int | None, str]:
    """Walk the chain: (events, last seq, last hash, first bad seq, problem). The details
    of ``memory.fields`` events are collected into ``sealed`` as they pass."""
    prev_hash, last_seq, count = GENESIS, None, 0
    for values in rows:
        seq, at, actor, action, namespace, memory_id, content_hash, detail, stored_prev, digest = (
            values
        )
        count += 1
        detail_obj, damaged = _detail_problem(seq, detail)
        if detail_obj is None:
            return count, last_seq, prev_hash, seq, str(damaged)
        if sealed is not None and action == seal.ACTION:
            sealed.append(detail_obj)
        event = {
            "seq": seq, "at": at, "actor": actor, "action": action, "namespace": namespace,
            "memory_id": memory_id, "content_hash": content_hash, "detail": detail_obj,
        }
        if stored_prev != prev_hash:
            where = "the start of the log" if last_seq is None else f"event {last_seq}"
            return count, last_seq, prev_hash, seq, (
                f"event {seq} does not follow {where}: an event was removed or moved"
            )
        if event_hash(stored_prev, event) != digest:
            return count, last_seq, prev_hash, seq, f"event {seq} was edited (its hash differs)"
        prev_hash, last_seq = digest, seq
    return count, last_seq, prev_hash, None, ""


def _content_problem(conn: Connection) -> tuple[str, str] | None:
    """(memory id, problem) of the first memory whose text differs from what was audited.

    Every change of a memory's text records the new text's sha256 in its audit event;
    a row edited in the file behind the engine's back no longer matches it.
    """
    for memory_id, content, stored, audited in AuditLog.audited_texts(conn):
        actual = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()
        if actual != stored:
            return str(memory_id), f"memory {memory_id}'s text was edited in the file"
        if audited is not None and audited != actual:
            return str(memory_id), (
                f"memory {memory_id}'s text differs from its last audited change"
            )
    return None


def _anchor_problem(anchor: AnchorState | None, expected: bool, conn: Connection,
                    last_seq: int | None) -> str | None:
    """What is wrong between the log and its anchor outside the file, if anything."""
    if anchor is None:
        return ("the audit anchor file is missing: the log's end cannot be checked"
                if expected else None)
    if not anchor.valid:
        return "the audit anchor file was altered (its MAC does not hold)"
    if anchor.seq == 0:
        return None
    if last_seq is None or last_seq < anchor.seq:
        ends = f"event {last_seq}" if last_seq is not None else "no event"
        return (f"the log ends at {ends} but its anchor records event {anchor.seq}: "
                "events were removed from the end")
    if AuditLog.hash_at(conn, anchor.seq) != anchor.hash:
        return f"event {anchor.seq} differs from the anchored one: the log was rewritten"
    return None


def _fields_problem(conn: Connection, details: list[dict[str, Any]]) -> str | None:
    """The first memory whose audited fields differ from their last seal (or that has
    none: a row added to the file directly)."""
    state = seal.sealed_state(details)
    for memory_id, _, values in seal.unsealed_rows(conn):
        found = state.get(memory_id)
        if found is None:
            return (f"memory {memory_id} has no audited change: it was added to the file "
                    "directly, not through aide-memoire")
        problem = seal.describe(memory_id, values, found[0], found[1])
        if problem is not None:
            return problem
    return None


def verify(conn: Connection, anchor: AnchorState | None = None, *,
           anchor_expected: bool = False, fields: bool = False) -> AuditReport:
    """Check every link, the recorded head, the anchor, the memories' text hashes and
    (``fields``: a store whose engine seals them, see seal.py) their audited fields."""
    details: list[dict[str, Any]] = []
    count, last_seq, last_hash, bad, problem = _check(AuditLog.events(conn), details)
    head = AuditLog.head(conn)
    if bad is not None:
        return AuditReport(intact=False, events=count, head_seq=last_seq, head_hash=last_hash,
                           first_bad_seq=bad, problem=problem)
    anchored = _anchor_problem(anchor, anchor_expected, conn, last_seq)
    if anchored is not None:
        first_bad = (last_seq or 0) + 1 if "removed" in anchored else None
        return AuditReport(intact=False, events=count, head_seq=last_seq, head_hash=last_hash,
                           first_bad_seq=first_bad, problem=anchored)
    if (head is not None or count) and (
        head is None or int(head[0]) != last_seq or str(head[1]) != last_hash
    ):
        recorded = f"event {head[0]}" if head else "no head"
        ends = f"event {last_seq}" if last_seq is not None else "no event"
        return AuditReport(
            intact=False, events=count, head_seq=last_seq, head_hash=last_hash,
            first_bad_seq=(last_seq or 0) + 1,
            problem=f"the log ends at {ends} but its head records {recorded}: "
            "events were removed from the end or the head was altered",
        )
    edited = _content_problem(conn)
    if edited is not None:
        return AuditReport(intact=False, events=count, head_seq=last_seq, head_hash=last_hash,
                           problem=edited[1])
    changed = _fields_problem(conn, details) if fields else None
    if changed is not None:
        return AuditReport(intact=False, events=count, head_seq=last_seq, head_hash=last_hash,
                           problem=changed)
    return AuditReport(intact=True, events=count, head_seq=last_seq, head_hash=last_hash)
