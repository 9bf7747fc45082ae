"""Health: status, store size and growth, snapshots (create, list), maintenance status;
doctor, audit verify and a maintenance dry run on demand, as background jobs (each reads
the whole store)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.responses import RedirectResponse

from ..engine.storage import browse as queries
from .html import esc, flash, form, page, select, table, when
from .jobs import Jobs

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from ..engine.facade.memory import Memory

__all__ = ["ROUTES"]


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(n)


def _doctor(memory: Memory) -> str:
    report = memory.doctor()
    rows = [[esc(c.name), "ok" if c.ok else '<strong class="bad">FAIL</strong>',
             esc(c.detail)] for c in report.checks]
    verdict = "healthy" if report.healthy else "unhealthy"
    return f"<h3>Doctor: {verdict}</h3>" + table(["Check", "Result", "Detail"], rows)


def _audit(memory: Memory) -> str:
    audit = memory.audit_verify()
    head = audit.head_seq if audit.head_seq is not None else "-"
    return (f"<h3>Audit log: {esc(audit.verdict())}</h3><p>{audit.events} events, head "
            f"#{esc(head)} <code>{esc((audit.head_hash or '')[:16])}</code></p>")


def _dry_run(memory: Memory, namespace: str) -> str:
    report = memory.maintain(namespace)  # a dry run: writes nothing
    rows = [[esc(a.kind), esc(a.state), esc(", ".join(a.memory_ids[:6])),
             esc(a.evidence.get("reason", a.evidence.get("similarity", "")))]
            for a in report.actions[:200]]
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
    return (f"<h3>Maintenance dry run of {esc(namespace)}</h3><p>Nothing was changed. "
            f"{len(report.actions)} steps planned; apply them with <code>aide-memoire "
            "maintain --apply</code>, which stages the judgement calls for Review.</p>"
            + (f"<ul>{notes}</ul>" if notes else "")
            + table(["Step", "State", "Memories", "Why"], rows,
                    caption="Planned steps (at most 200 shown)"))


def _jobs(jobs: Jobs) -> str:
    out = []
    for job in jobs.snapshot():
        if job.running:
            out.append(f'<p role="status">{esc(job.name)}: running for {job.seconds:.0f} s '
                       "(this page refreshes itself)</p>")
        elif job.error:
            out.append(f'<p class="error" role="alert">{esc(job.name)}: {esc(job.error)}</p>')
        else:
            out.append(f'{job.html}<p class="muted">{esc(job.name)} took {job.seconds:.1f} s</p>')
    return "".join(out)


def _maintenance(memory: Memory, csrf: str) -> str:
    status = memory.maintenance_status()
    rows = [[esc(n.namespace), esc(when(n.last_run_at) or "never"),
             esc(f"{n.last_run_mode or ''} {n.last_run_status or ''}".strip()),
             str(n.pending_proposals), str(n.archived), esc(n.lease_holder or "")]
            for n in status.namespaces]
    names = [n.namespace for n in status.namespaces] or ["default"]
    dry = form("/ui/health/run", csrf, '<input type="hidden" name="check" value="maintain">'
               + select("namespace", "Namespace", names, names[0], blank=""),
               "Dry run maintenance", cls="filters")
    return ("<h2>Maintenance</h2>"
            f"<p>Scoring {'on' if status.scoring else 'off'} · near-duplicates "
            f"{esc(status.near_duplicates)} · consolidation {esc(status.consolidation)} · "
            f"background {esc(status.auto_maintenance)}</p>"
            + table(["Namespace", "Last run", "Mode / result", "Proposals waiting", "Archived",
                     "Running now"], rows) + dry)


def health(memory: Memory, request: Request) -> Response:
    csrf = request.state.csrf
    status = memory.status()
    with memory.internals.db.read() as conn:
        months = queries.growth(conn)
    facts = [("Version", status.version), ("Store", status.db_path),
             ("Size", _size(status.db_bytes)), ("Memories", status.memories),
             ("Schema", status.schema_version),
             ("Database", f"{status.db_engine} ({status.db_driver}, "
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
    jobs: Jobs = request.app.state.jobs
    running = any(j.running for j in jobs.snapshot())
    body = (
        f"{flash(request.query_params)}"
        f'<div class="cols even"><section><h2>Status</h2><table class="meta">{summary}</table>'
        f"{stages}</section><section><h2>Checks</h2><p>"
        + form("/ui/health/run", csrf, '<input type="hidden" name="check" value="doctor">',
               "Run doctor", cls="inline")
        + form("/ui/health/run", csrf, '<input type="hidden" name="check" value="audit">',
               "Verify audit log", cls="inline")
        + f"</p>{_jobs(jobs)}{growth}</section></div>"
        f"<h2>Snapshots</h2>{form('/ui/health/snapshot', csrf, '', 'Create a snapshot')}{snaps}"
        f"{_maintenance(memory, csrf)}"
    )
    return page("Health", body, current="/health", refresh=2 if running else None)


def snapshot(memory: Memory, request: Request) -> Response:
    info = memory.snapshot()
    return RedirectResponse(f"/ui/health?{urlencode({'ok': f'snapshot {info.name} created'})}",
                            303)


def run(memory: Memory, request: Request) -> Response:
    data: dict[str, str] = request.state.form
    check = data.get("check", "")
    namespace = data.get("namespace", "") or "default"
    work: dict[str, Callable[[], str]] = {
        "doctor": lambda: _doctor(memory), "audit": lambda: _audit(memory),
        "maintain": lambda: _dry_run(memory, namespace),
    }
    if check not in work:
        return RedirectResponse(f"/ui/health?{urlencode({'error': 'unknown check'})}", 303)
    jobs: Jobs = request.app.state.jobs
    started = jobs.start(memory, memory.actor, check, work[check])
    message = {"ok": f"{check} started"} if started else {"error": f"{check} is already running"}
    return RedirectResponse(f"/ui/health?{urlencode(message)}", 303)


ROUTES: list[tuple[str, Any, list[str]]] = [
    ("/health", health, ["GET"]), ("/health/snapshot", snapshot, ["POST"]),
    ("/health/run", run, ["POST"]),
]
