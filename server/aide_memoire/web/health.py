"""Health: status, store size and growth, snapshots (create, list), maintenance status;
doctor, audit verify and a maintenance dry run on demand (each reads the whole store)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.responses import RedirectResponse

from . import queries
from .html import esc, flash, form, page, select, table, url, when

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from ..engine.memory import Memory

__all__ = ["ROUTES"]


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(n)


def _checks(memory: Memory, which: str) -> str:
    if which == "doctor":
        report = memory.doctor()
        rows = [[esc(c.name), "ok" if c.ok else '<strong class="bad">FAIL</strong>',
                 esc(c.detail)] for c in report.checks]
        verdict = "healthy" if report.healthy else "unhealthy"
        return f"<h2>Doctor: {verdict}</h2>" + table(["Check", "Result", "Detail"], rows)
    if which == "audit":
        audit = memory.audit_verify()
        verdict = ("intact" if audit.intact else
                   f"BROKEN at event {audit.first_bad_seq}")
        return (f"<h2>Audit log: {esc(verdict)}</h2><p>{audit.events} events, head "
                f"#{esc(audit.head_seq)} <code>{esc((audit.head_hash or '')[:16])}</code></p>")
    return ""


def _maintenance(memory: Memory, csrf: str) -> str:
    status = memory.maintenance_status()
    rows = [[esc(n.namespace), esc(when(n.last_run_at) or "never"),
             esc(f"{n.last_run_mode or ''} {n.last_run_status or ''}".strip()),
             str(n.pending_proposals), str(n.archived), esc(n.lease_holder or "")]
            for n in status.namespaces]
    names = [n.namespace for n in status.namespaces] or ["default"]
    dry = ('<form method="get" action="/ui/health/maintain" class="filters">'
           f'{select("namespace", "Namespace", names, names[0], blank="")}'
           '<button type="submit">Dry run maintenance</button></form>')
    return ("<h2>Maintenance</h2>"
            f"<p>Scoring {'on' if status.scoring else 'off'} · near-duplicates "
            f"{esc(status.near_duplicates)} · consolidation {esc(status.consolidation)} · "
            f"background {esc(status.auto_maintenance)}</p>"
            + table(["Namespace", "Last run", "Mode / result", "Proposals waiting", "Archived",
                     "Running now"], rows) + dry)


def health(memory: Memory, request: Request) -> Response:
    csrf = request.state.csrf
    status = memory.status()
    with memory.db.read() as conn:
        months = queries.growth(conn)
    facts = [("Version", status.version), ("Store", status.db_path),
             ("Size", _size(status.db_bytes)), ("Memories", status.memories),
             ("Schema", status.schema_version),
             ("SQLite", f"{status.sqlite_version} ({status.sqlite_driver}, "
                        f"{status.journal_mode})")]
    summary = "".join(f'<tr><th scope="row">{esc(k)}</th><td>{esc(v)}</td></tr>'
                      for k, v in facts)
    stages = table(["Stage", "Live", "Detail"], [
        [esc(s.name), "yes" if s.live else "no", esc(s.detail)] for s in status.stages],
        caption="Recall and write stages")
    growth = table(["Month", "Memories created"], [[esc(m), str(n)] for m, n in months],
                   caption="Growth (latest 12 months)")
    snaps = table(["Snapshot", "Size", "Created"], [
        [esc(s.name), _size(s.bytes), esc(when(s.created_at))] for s in memory.snapshots()[:20]],
        caption="Snapshots (newest first, at most 20)")
    which = request.query_params.get("check", "")
    body = (
        f"{flash(request.query_params)}"
        f'<div class="cols"><section><h2>Status</h2><table class="meta">{summary}</table>'
        f"{stages}</section><section>{growth}</section></div>"
        '<h2>Checks</h2><p>'
        f'<a class="button" href="{esc(url("/health", check="doctor"))}">Run doctor</a> '
        f'<a class="button" href="{esc(url("/health", check="audit"))}">Verify audit log</a></p>'
        f"{_checks(memory, which)}"
        f"<h2>Snapshots</h2>{form('/ui/health/snapshot', csrf, '', 'Create a snapshot')}{snaps}"
        f"{_maintenance(memory, csrf)}"
    )
    return page("Health", body, current="/health")


def snapshot(memory: Memory, request: Request) -> Response:
    info = memory.snapshot()
    return RedirectResponse(f"/ui/health?{urlencode({'ok': f'snapshot {info.name} created'})}",
                            303)


def maintain(memory: Memory, request: Request) -> Response:
    namespace = request.query_params.get("namespace", "") or "default"
    report = memory.maintain(namespace)  # a dry run: writes nothing
    rows = [[esc(a.kind), esc(a.state), esc(", ".join(a.memory_ids[:6])),
             esc(a.evidence.get("reason", a.evidence.get("similarity", "")))]
            for a in report.actions[:200]]
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
    body = (f"<p>Dry run of {esc(namespace)}: nothing was changed. {len(report.actions)} "
            "steps planned; apply them with <code>aide-memoire maintain --apply</code>, "
            "which stages the judgement calls on the Review page.</p>"
            + (f"<ul>{notes}</ul>" if notes else "")
            + table(["Step", "State", "Memories", "Why"], rows, caption="Planned steps")
            + '<p><a href="/ui/health">Back to Health</a></p>')
    return page("Maintenance dry run", body, current="/health")


ROUTES: list[tuple[str, Any, list[str]]] = [
    ("/health", health, ["GET"]), ("/health/snapshot", snapshot, ["POST"]),
    ("/health/maintain", maintain, ["GET"]),
]
