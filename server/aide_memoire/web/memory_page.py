"""One memory: its text, metadata, facts, supersession timeline, links, feedback and
audit events; edit, forget (dry-run count first), promote, archive, feedback."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.responses import RedirectResponse

from ..engine.core.errors import AideMemoireError, NotFound
from ..engine.storage import browse as queries
from .html import esc, flash, form, held, memory_url, page, pretty, table, when

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from ..engine.core.models import MemoryRecord
    from ..engine.facade.memory import Memory

__all__ = ["ROUTES"]

CHAIN_MAX = 10


def _ids(request: Request) -> tuple[str, str]:
    return request.path_params["namespace"], request.path_params["memory_id"]


def _back(namespace: str, memory_id: str, **message: str) -> Response:
    from urllib.parse import urlencode

    return RedirectResponse(f"{memory_url(namespace, memory_id)}?{urlencode(message)}", 303)


def _meta(record: MemoryRecord) -> str:
    rows = [("Namespace", record.namespace), ("Kind", record.kind), ("Status", record.status),
            ("Tags", ", ".join(record.tags)), ("Importance", record.importance),
            ("Source", record.source), ("Created", when(record.created_at)),
            ("Updated", when(record.updated_at)), ("Observed", when(record.observed_at)),
            ("Valid from", when(record.valid_from)), ("Valid to", when(record.valid_to)),
            ("Superseded by", record.superseded_by), ("Recalled", record.access_count),
            ("Utility", f"{record.utility:.3f}"), ("Session", record.session_id),
            ("Speaker", record.speaker), ("Position", record.position)]
    cells = "".join(f'<tr><th scope="row">{esc(k)}</th><td>{esc(v)}</td></tr>'
                    for k, v in rows if v not in (None, ""))
    return f'<table class="meta"><caption>Metadata</caption>{cells}</table>'


def _chain(memory: Memory, record: MemoryRecord) -> str:
    """What this memory replaced and what replaced it, oldest first."""
    with memory.internals.db.read() as conn:
        before = queries.replaced_by(conn, record.namespace, record.id)
    after: list[MemoryRecord] = []
    nxt = record.superseded_by
    while nxt and len(after) < CHAIN_MAX:
        try:
            later = memory.get(nxt, namespace=record.namespace)
        except NotFound:
            break
        after.append(later)
        nxt = later.superseded_by
    if not before and not after:
        return '<p class="muted">Nothing replaced it and nothing has replaced it.</p>'
    items = [f'<li><a href="{esc(memory_url(record.namespace, i))}">{esc(i)}</a> '
             f'<span class="muted">{esc(c[:16].replace("T", " "))} · replaced by this</span></li>'
             for i, c in before]
    items.append(f'<li aria-current="true"><strong>{esc(record.id)}</strong> '
                 f'<span class="muted">{esc(when(record.created_at))} · this memory</span></li>')
    items += [f'<li><a href="{esc(memory_url(r.namespace, r.id))}">{esc(r.id)}</a> '
              f'<span class="muted">{esc(when(r.created_at))} · replaced it</span></li>'
              for r in after]
    return f'<ol class="timeline">{"".join(items)}</ol>'


def detail(memory: Memory, request: Request) -> Response:
    namespace, memory_id = _ids(request)
    record = memory.get_detail(memory_id, namespace=namespace)
    csrf = request.state.csrf
    base = memory_url(namespace, memory_id)
    facts = table(["Subject", "Predicate", "Value", "From", "To"], [
        [esc(f.subject_text), esc(f.predicate), esc(f.object_text), esc(when(f.valid_from)),
         esc(when(f.valid_to))] for f in record.facts], caption="Facts read from it")
    links = table(["Source", "Target", "Kind", "Score"], [
        [f'<a href="{esc(memory_url(namespace, ln["source"]))}">{esc(ln["source"])}</a>',
         f'<a href="{esc(memory_url(namespace, ln["target"]))}">{esc(ln["target"])}</a>',
         esc(ln["kind"]), esc(ln["score"])] for ln in memory.links(memory_id)], caption="Links")
    with memory.internals.db.read() as conn:
        votes = queries.feedback_of(conn, memory_id)
    feedback = ("<p>No feedback yet.</p>" if votes is None else
                f"<p>Helpful {votes[0]} · unhelpful {votes[1]} · wrong {votes[2]} "
                f'<span class="muted">(last {esc((votes[3] or "")[:16])})</span></p>')
    vote_forms = "".join(
        form(f"{base}/feedback", csrf, f'<input type="hidden" name="outcome" value="{o}">',
             f"Mark {o}", cls="inline") for o in ("helpful", "unhelpful", "wrong"))
    events = table(["#", "At", "Actor", "Action", "Detail"], [
        [str(e.seq), esc(when(e.at)), esc(e.actor), esc(e.action), pretty(e.detail)]
        for e in memory.audit_history(memory_id)], caption="Audit events (oldest first)")
    tier = (form(f"{base}/promote", csrf, "", "Promote to active", cls="inline")
            if record.status == "archived" else
            form(f"{base}/archive", csrf, "", "Archive (cold tier)", cls="inline")
            if record.status == "active" else "")
    edit = form(f"{base}/edit", csrf, (
        f'<label for="e-content">Text</label><textarea id="e-content" name="content" rows="6">'
        f"{esc(record.content)}</textarea>"
        f'<label for="e-tags">Tags (comma-separated)</label><input id="e-tags" name="tags" '
        f'value="{esc(", ".join(record.tags))}">'
        f'<label for="e-imp">Importance (0 to 1)</label><input id="e-imp" name="importance" '
        f'type="number" min="0" max="1" step="0.05" value="{record.importance}">'), "Save changes")
    body = (
        f"{flash(request.query_params)}{held(record.content)}"
        f'<div class="cols"><section aria-labelledby="h-meta"><h2 id="h-meta">Details</h2>'
        f"{_meta(record)}<h3>Caller metadata</h3>{pretty(record.metadata)}</section>"
        f'<section aria-labelledby="h-act"><h2 id="h-act">Actions</h2>{tier}'
        f'<p><a class="button danger" href="{esc(base)}/forget">Forget...</a></p>'
        f"<details><summary>Edit</summary>{edit}</details>"
        f"<h3>Feedback</h3>{feedback}{vote_forms}</section></div>"
        f"<h2>Supersession</h2>{_chain(memory, record)}"
        f"<h2>Facts</h2>{facts}<h2>Links</h2>{links}<h2>Audit</h2>{events}"
    )
    return page(f"Memory {memory_id}", body, current="/")


def edit(memory: Memory, request: Request) -> Response:
    namespace, memory_id = _ids(request)
    data: dict[str, str] = request.state.form
    current = memory.get(memory_id, namespace=namespace)
    changes: dict[str, Any] = {}
    if data.get("content", current.content) != current.content:
        changes["content"] = data["content"]
    tags = [t.strip() for t in data.get("tags", "").split(",") if t.strip()]
    if "tags" in data and tags != current.tags:
        changes["tags"] = tags
    if data.get("importance"):
        try:
            importance = float(data["importance"])
        except ValueError:
            return _back(namespace, memory_id, error="importance must be a number from 0 to 1")
        if importance != current.importance:
            changes["importance"] = importance
    if not changes:
        return _back(namespace, memory_id, ok="nothing changed")
    try:
        memory.update(memory_id, namespace=namespace, **changes)
    except AideMemoireError as exc:
        return _back(namespace, memory_id, error=str(exc))
    return _back(namespace, memory_id, ok=f"saved: {', '.join(sorted(changes))}")


def forget_confirm(memory: Memory, request: Request) -> Response:
    namespace, memory_id = _ids(request)
    record = memory.get(memory_id, namespace=namespace)
    dry = memory.forget_matching(namespace=namespace, only_id=memory_id, dry_run=True)
    base = memory_url(namespace, memory_id)
    body = (
        f"<p>Dry run: forgetting would delete <strong>{len(dry.ids)}</strong> memory "
        f"({esc(', '.join(dry.ids))}) from the rows and every index. This cannot be undone "
        "(a snapshot can bring it back).</p>" + held(record.content)
        + form(f"{base}/forget", request.state.csrf, "", f"Forget {len(dry.ids)} memory",
               cls="danger") + f'<p><a href="{esc(base)}">Cancel</a></p>'
    )
    return page("Forget a memory?", body, current="/")


def forget(memory: Memory, request: Request) -> Response:
    namespace, memory_id = _ids(request)
    gone = memory.forget(memory_id, namespace=namespace)
    message = f"forgot {memory_id}" if gone else f"{memory_id} was already gone"
    from urllib.parse import urlencode

    return RedirectResponse(f"/ui/?{urlencode({'namespace': namespace, 'ok': message})}", 303)


def promote(memory: Memory, request: Request) -> Response:
    namespace, memory_id = _ids(request)
    done = memory.promote(memory_id, namespace=namespace)
    return _back(namespace, memory_id, ok="promoted to active" if done.restored
                 else f"not archived (status {done.status})")


def archive(memory: Memory, request: Request) -> Response:
    namespace, memory_id = _ids(request)
    done = memory.archive(memory_id, namespace=namespace)
    return _back(namespace, memory_id, ok="archived (cold tier)" if done.restored
                 else f"not active (status {done.status})")


def feedback(memory: Memory, request: Request) -> Response:
    namespace, memory_id = _ids(request)
    result = memory.feedback(memory_id, request.state.form.get("outcome", ""), namespace=namespace)
    return _back(namespace, memory_id, ok=f"recorded {result.outcome}")


_M = "/m/{namespace}/{memory_id}"
ROUTES: list[tuple[str, Any, list[str]]] = [
    (_M, detail, ["GET"]), (f"{_M}/edit", edit, ["POST"]),
    (f"{_M}/forget", forget_confirm, ["GET"]), (f"{_M}/forget", forget, ["POST"]),
    (f"{_M}/promote", promote, ["POST"]), (f"{_M}/archive", archive, ["POST"]),
    (f"{_M}/feedback", feedback, ["POST"]),
]
