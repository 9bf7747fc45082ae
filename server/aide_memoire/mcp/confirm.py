"""Asking the person before a destructive call, where the client can ask (elicitation).

Three calls delete or retire what is stored: ``memory_forget``, ``memory_maintenance_run``
with ``apply=true`` and ``memory_consolidate`` with ``dry_run=false``. When the client
declared the elicitation capability, the server first works out what the call would do
(the memory's text, the maintenance plan, the summaries: a dry run, nothing written),
shows it to the person, and runs the call only on an explicit yes. A no, a dismissed
dialog or an answer without ``confirm: true`` changes nothing, and the agent reads that it
was not done. A client without elicitation gets today's behaviour: the explicit
``apply`` / ``dry_run`` arguments are the confirmation.

The two protocol eras ask differently:

- up to 2025-11-25, the server sends ``elicitation/create`` in the middle of the call
  and waits for the answer;
- from 2026-07-28, the call returns an ``InputRequiredResult`` carrying the question, and
  the client calls again with the answer. The retry is matched by a fingerprint of the
  plan in ``request_state``: if what the call would do changed in between (another client
  wrote), the person is asked again about the new plan, never about the old one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .render import neutralise_tags, render_memory

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..engine.facade.memory import Memory

__all__ = ["CONFIRM_KEY", "SCHEMA", "Plan", "answer_confirms", "plan_for"]

CONFIRM_KEY = "confirm"  # the key of the one input request in an InputRequiredResult
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Go ahead",
                               "description": "Yes: do it. No: change nothing."}},
    "required": ["confirm"],
}


@dataclass(frozen=True)
class Plan:
    """What a destructive call would do, as the person reads it, and its fingerprint."""

    message: str

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.message.encode()).hexdigest()[:32]

    def state(self, tool: str) -> str:
        return json.dumps({"tool": tool, "plan": self.fingerprint})

    def matches(self, tool: str, state: str | None) -> bool:
        try:
            echoed = json.loads(state or "")
        except ValueError:
            return False
        return isinstance(echoed, dict) and echoed == json.loads(self.state(tool))


def _forget(memory: Memory, args: Any, namespace: str) -> Plan | None:
    from ..engine.core.errors import NotFound

    try:
        record = memory.get(args.id, namespace=namespace)
    except NotFound:
        return None  # nothing to delete: the call itself says so
    return Plan("Delete this memory for good, from every index? The audit log keeps that "
                "it happened, not the text.\n" + render_memory(record))


def _maintain(memory: Memory, args: Any, namespace: str) -> Plan | None:
    if not args.apply:
        return None
    report = memory.maintain(namespace, apply=False, auto_only=args.auto_only)
    if not report.actions:
        return None
    # Kinds and ids only: the evidence holds figures (ages) that move between two calls,
    # and the plan's fingerprint must not.
    lines = [f"Maintenance of {namespace} would do {len(report.actions)} step(s) (safe ones "
             "done, judgement calls staged for review):"]
    for action in report.actions[:20]:
        lines.append(f"- {action.kind}: {', '.join(action.memory_ids)}")
    if len(report.actions) > 20:
        lines.append(f"- ... and {len(report.actions) - 20} more")
    return Plan("\n".join(lines))


def _consolidate(memory: Memory, args: Any, namespace: str) -> Plan | None:
    if args.dry_run:
        return None
    report = memory.consolidate(namespace, dry_run=True, limit=args.limit)
    if not report.summaries:
        return None
    lines = [f"Write {len(report.summaries)} summary(ies) in {namespace} and archive their "
             "sources (still readable with include_archived):"]
    for summary in report.summaries[:10]:
        lines.append(f"- of {', '.join(summary.source_ids)}: "
                     + neutralise_tags(summary.text[:300]))
    return Plan("\n".join(lines))


_PLANNERS = {"memory_forget": _forget, "memory_maintenance_run": _maintain,
             "memory_consolidate": _consolidate}


def plan_for(tool: str, memory: Memory, args: BaseModel, namespace: str) -> Plan | None:
    """What ``tool`` called with ``args`` would remove, or None when it needs no asking
    (not a destructive call, a dry run, or nothing to do)."""
    planner = _PLANNERS.get(tool)
    return None if planner is None else planner(memory, args, namespace)


def answer_confirms(action: str, content: dict[str, Any] | None) -> bool:
    """Only an accepted form with ``confirm: true`` is a yes."""
    return action == "accept" and content is not None and content.get(CONFIRM_KEY) is True
