"""``aide-memoire review list|decide`` and ``aide-memoire audit verify|show``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from ..engine.core.errors import NotFound
from ..engine.trust.models import AuditEvent, ReviewItem
from .output import EXIT_ERROR, emit, emit_failure, fail

__all__ = ["register"]


def _item_text(item: ReviewItem) -> str:
    head = f"{item.id}  {item.kind}  {item.namespace}  {item.status}"
    if item.memory_id:
        head += f"  memory {item.memory_id}"
    lines = [head]
    if item.evidence.get("provenance"):
        lines.append(f"    from: {item.evidence['provenance']}")  # who its words come from
    for finding in item.evidence.get("findings", []):
        lines.append(
            f"    {finding.get('rule')}: {finding.get('label')} at {finding.get('start')}"
            f"-{finding.get('end')} ({finding.get('confidence')})"
        )
    if item.content is not None:
        # Quoted so a reader sees it as data, never as instructions.
        lines.append("    quoted: " + repr(item.content[:300]))
    return "\n".join(lines)


def _event_text(event: AuditEvent) -> str:
    when = event.at.strftime("%Y-%m-%d %H:%M:%S")
    digest = f"  content {event.content_hash[:12]}" if event.content_hash else ""
    detail = ", ".join(f"{k}={v}" for k, v in sorted(event.detail.items()))
    return f"#{event.seq}  {when}  {event.action:<15} by {event.actor}{digest}  {detail}"


def register(cli: click.Group, open_memory: Callable[[click.Context], Any]) -> None:
    """Add the review and audit command groups to the ``aide-memoire`` group."""

    @cli.group()
    def review() -> None:
        """The review queue: writes held as suspected injection, maintenance proposals."""

    @review.command(name="list")
    @click.option("--namespace", "-n", default=None, help="One namespace (default: all).")
    @click.option(
        "--status",
        type=click.Choice(["pending", "approved", "rejected", "expired"]),
        default="pending",
        show_default=True,
    )
    @click.option("--limit", type=int, default=50, show_default=True)
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def review_list(
        ctx: click.Context, namespace: str | None, status: str, limit: int, as_json: bool
    ) -> None:
        """List items waiting for a decision, with their evidence."""
        with open_memory(ctx) as memory:
            items = memory.review_queue(namespace=namespace, limit=limit, status=status)
        text = "\n".join(_item_text(i) for i in items) or f"no {status} items"
        emit({"items": items}, as_json=as_json, text=text)

    @review.command(name="decide")
    @click.argument("item_id")
    @click.argument("decision", type=click.Choice(["approve", "reject", "edit"]))
    @click.option("--namespace", "-n", default=None,
                  help="Only decide an item of this namespace (default: any).")
    @click.option("--text", default=None, help="With 'edit': the new text (screened again).")
    @click.option("--note", default=None, help="Why, kept with the decision.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def review_decide(
        ctx: click.Context,
        item_id: str,
        decision: str,
        namespace: str | None,
        text: str | None,
        note: str | None,
        as_json: bool,
    ) -> None:
        """Approve, reject (deletes the memory) or edit-then-approve ITEM_ID."""
        with open_memory(ctx) as memory:
            try:
                result = memory.review_decide(item_id, decision, namespace=namespace, text=text,
                                              note=note)
            except NotFound as exc:
                fail(f"{exc}; list the items with `aide-memoire review list`")
        if not result.applied:
            emit_failure(result, as_json=as_json, message=result.message)
        emit(result, as_json=as_json, text=result.message)

    @cli.group()
    def audit() -> None:
        """The hash-chained audit log of every change."""

    @audit.command(name="verify")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def audit_verify(ctx: click.Context, as_json: bool) -> None:
        """Check the chain; exit 0 only when no event was edited, removed or moved."""
        with open_memory(ctx) as memory:
            report = memory.audit_verify()
        if report.intact:
            text = f"intact: {report.events} events, head {report.head_hash or '-'}"
        else:
            text = f"BROKEN at event {report.first_bad_seq}: {report.problem}"
        emit(report, as_json=as_json, text=text)
        if not report.intact:
            sys.exit(EXIT_ERROR)

    @audit.command(name="show")
    @click.argument("memory_id")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def audit_show(ctx: click.Context, memory_id: str, as_json: bool) -> None:
        """The history of one memory: every event about it, oldest first."""
        with open_memory(ctx) as memory:
            events = memory.audit_history(memory_id)
        text = "\n".join(_event_text(e) for e in events) or f"no events for {memory_id}"
        emit({"memory_id": memory_id, "events": events}, as_json=as_json, text=text)
