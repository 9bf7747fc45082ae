"""``aide-memoire maintain``, ``maintenance-status``, ``feedback``, ``consolidate``, ``promote``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..engine.core.errors import MaintenanceBusy
from ..engine.lifecycle.models import Action, MaintenanceReport
from .output import EXIT_BUSY, emit, emit_failure, fail, plural

__all__ = ["register"]


def _action_text(action: Action) -> str:
    ids = ", ".join(action.memory_ids[:6]) + (" ..." if len(action.memory_ids) > 6 else "")
    why = ", ".join(f"{k}={v}" for k, v in sorted(action.evidence.items())
                    if k in ("reason", "similarity", "found", "expires_at", "count", "retention",
                             "feedback", "copies"))
    item = f"  -> review item {action.proposal_id}" if action.proposal_id else ""
    return f"  {action.state:<8} {action.kind:<16} {ids}  ({why}){item}"


def _report_text(report: MaintenanceReport) -> str:
    head = ("dry run (nothing written; --apply to act)" if report.dry_run
            else f"run {report.run_id}: {report.done} done, {report.proposed} proposed")
    lines = [f"maintenance of {report.namespace}: {head}"]
    lines += [_action_text(a) for a in report.actions] or ["  nothing to do"]
    lines += [f"  note: {n}" for n in report.notes]
    return "\n".join(lines)


def register(cli: click.Group, open_memory: Callable[[click.Context], Any]) -> None:
    """Add the lifecycle commands to the ``aide-memoire`` group."""

    @cli.command()
    @click.option("--namespace", "-n", default="default", show_default=True)
    @click.option("--apply", is_flag=True,
                  help="Do the safe steps and stage proposals (default: dry run, no writes).")
    @click.option("--auto-only", is_flag=True,
                  help="Only the safe steps (exact duplicates, expired memories); no proposals.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def maintain(ctx: click.Context, namespace: str, apply: bool, auto_only: bool,
                 as_json: bool) -> None:
        """Maintain a namespace: a dry-run report unless --apply. Proposals go to `review list`."""
        with open_memory(ctx) as memory:
            try:
                report = memory.maintain(namespace, apply=apply, auto_only=auto_only)
            except MaintenanceBusy as exc:
                fail(str(exc), EXIT_BUSY)
        emit(report, as_json=as_json, text=_report_text(report))

    @cli.command(name="maintenance-status")
    @click.option("--namespace", "-n", default=None, help="One namespace (default: all).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def maintenance_status(ctx: click.Context, namespace: str | None, as_json: bool) -> None:
        """When maintenance last ran per namespace, and which lifecycle parts are live."""
        with open_memory(ctx) as memory:
            status = memory.maintenance_status(namespace)
        lines = [f"scoring          {'on' if status.scoring else 'off'}",
                 f"near duplicates  {status.near_duplicates}",
                 f"consolidation    {status.consolidation}",
                 f"background       {status.auto_maintenance}"]
        for ns in status.namespaces:
            when = ns.last_run_at.strftime("%Y-%m-%d %H:%M") if ns.last_run_at else "never"
            lines.append(f"  {ns.namespace:<30} last run {when} ({ns.last_run_status or '-'}), "
                         f"{ns.pending_proposals} proposals pending, {ns.archived} archived")
        emit(status, as_json=as_json, text="\n".join(lines))

    @cli.command()
    @click.argument("memory_id")
    @click.argument("outcome", type=click.Choice(["helpful", "unhelpful", "wrong"]))
    @click.option("--namespace", "-n", default="default", show_default=True)
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def feedback(ctx: click.Context, memory_id: str, outcome: str, namespace: str,
                 as_json: bool) -> None:
        """Record whether MEMORY_ID helped; recall ranks by the running estimate."""
        with open_memory(ctx) as memory:
            result = memory.feedback(memory_id, outcome, namespace=namespace)
        emit(result, as_json=as_json,
             text=f"{memory_id}: {outcome} (estimate {result.estimate:+.2f} from "
             f"{result.helpful} helpful, {result.unhelpful} unhelpful, {result.wrong} wrong)")

    @cli.command()
    @click.option("--namespace", "-n", default="default", show_default=True)
    @click.option("--dry-run", is_flag=True, help="Show the summaries; write nothing.")
    @click.option("--limit", type=int, default=20, show_default=True,
                  help="At most this many summaries.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def consolidate(ctx: click.Context, namespace: str, dry_run: bool, limit: int,
                    as_json: bool) -> None:
        """Summarise clusters of related memories (extractive); sources are archived."""
        with open_memory(ctx) as memory:
            report = memory.consolidate(namespace, dry_run=dry_run, limit=limit)
        verb = "would write" if dry_run else "wrote"
        lines = [f"{verb} {plural(len(report.summaries), 'summary')} in {namespace}"]
        for plan in report.summaries:
            lines.append(f"\n{plan.summary_id or '(dry run)'}  from "
                         f"{plural(len(plan.source_ids), 'memory')}, "
                         f"similarity {plan.similarity:.2f}\n{plan.text}")
        lines += [f"note: {n}" for n in report.notes]
        emit(report, as_json=as_json, text="\n".join(lines))

    @cli.command()
    @click.argument("memory_id")
    @click.option("--namespace", "-n", default="default", show_default=True)
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def promote(ctx: click.Context, memory_id: str, namespace: str, as_json: bool) -> None:
        """Bring an archived (cold) memory back to the active tier."""
        with open_memory(ctx) as memory:
            result = memory.promote(memory_id, namespace=namespace)
        if not result.restored:
            emit_failure(result, as_json=as_json,
                         message=f"{memory_id} is {result.status}; nothing to promote")
        emit(result, as_json=as_json, text=f"promoted {memory_id}")
