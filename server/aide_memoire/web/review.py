"""Review: the quarantine and maintenance-proposal queues with their evidence; approve,
reject or edit, each decided once (a second decision is refused, as with the tools)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.responses import RedirectResponse

from ..engine.core.errors import AideMemoireError, NotFound
from .html import esc, field, flash, form, held, highlighted, memory_url, page, pretty, select, when

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from ..engine.facade.memory import Memory
    from ..engine.trust.models import ReviewItem

__all__ = ["ROUTES"]

STATUSES = ("pending", "approved", "rejected", "expired")
SHOWN = 100


def _rules(item: ReviewItem) -> str:
    findings = item.evidence.get("findings") or []
    if not findings:
        return ""
    rows = "".join(
        f"<li><strong>{esc(f.get('label'))}</strong> ({esc(f.get('category'))}, rule "
        f"{esc(f.get('rule'))}, {esc(f.get('confidence'))}) at {esc(f.get('start'))}-"
        f"{esc(f.get('end'))}</li>" for f in findings if isinstance(f, dict))
    return f"<h4>Rules fired</h4><ul>{rows}</ul>"


def _quarantine(item: ReviewItem) -> str:
    spans = [(int(f["start"]), int(f["end"]), str(f.get("label", "")))
             for f in item.evidence.get("findings") or []
             if isinstance(f, dict) and isinstance(f.get("start"), int)
             and isinstance(f.get("end"), int) and f.get("field", "content") == "content"]
    text = held(None) if item.content is None else highlighted(item.content, spans)
    return text + _rules(item)


def _proposal(memory: Memory, item: ReviewItem) -> str:
    """The memories a proposal would touch, so the merge or summary can be judged."""
    ids = [str(i) for i in item.evidence.get("sources") or []] or (
        [item.memory_id] if item.memory_id else [])
    into = item.evidence.get("into")
    parts = []
    for memory_id in dict.fromkeys([*ids, *([str(into)] if into else [])]):
        try:
            record = memory.get(memory_id, namespace=item.namespace)
        except NotFound:
            parts.append(f"<p class=\"muted\">{esc(memory_id)}: gone</p>")
            continue
        role = " (kept: merged into)" if memory_id == into else ""
        parts.append(f'<h4><a href="{esc(memory_url(item.namespace, memory_id))}">'
                     f"{esc(memory_id)}</a>{esc(role)} · {esc(record.status)}</h4>"
                     + held(record.content))
    preview = item.evidence.get("text") or item.evidence.get("summary")
    if isinstance(preview, str):
        parts.append(held(preview, label="Preview of the summary"))
    return "".join(parts)


def _card(memory: Memory, item: ReviewItem, csrf: str) -> str:
    action = f"/ui/review/{item.id}"
    decide = ""
    if item.status == "pending":
        def one(decision: str, label: str, cls: str = "inline") -> str:
            return form(action, csrf, f'<input type="hidden" name="decision" value="{decision}">',
                        label, cls=cls)
        decide = one("approve", "Approve") + one("reject", "Reject", "inline danger")
        if item.kind == "quarantine" and item.content is not None:
            decide += ("<details><summary>Edit, then approve</summary>"
                       + form(action, csrf, '<input type="hidden" name="decision" value="edit">'
                              f'<label for="t-{esc(item.id)}">Replacement text</label>'
                              f'<textarea id="t-{esc(item.id)}" name="text" rows="4">'
                              f"{esc(item.content)}</textarea>", "Save and approve")
                       + "</details>")
    body = _quarantine(item) if item.kind == "quarantine" else _proposal(memory, item)
    decided = (f" · {esc(item.status)} by {esc(item.decided_by)} {esc(when(item.decided_at))}"
               if item.decided_at else "")
    return (
        f'<article class="card" aria-labelledby="r-{esc(item.id)}">'
        f'<h3 id="r-{esc(item.id)}">{esc(item.kind)} · {esc(item.id)}</h3>'
        f'<p class="muted">{esc(item.namespace)} · staged {esc(when(item.created_at))}'
        f' · expires {esc(when(item.expires_at) or "never")}{decided}</p>'
        f"{body}<details><summary>Evidence</summary>{pretty(item.evidence)}</details>"
        f'<div class="actions">{decide}</div></article>'
    )


def queue(memory: Memory, request: Request) -> Response:
    params = request.query_params
    namespace = params.get("namespace", "") or None
    status = params.get("status", "") or "pending"
    kind = params.get("kind", "") or None
    items = memory.review_queue(namespace, SHOWN, status=status, kind=kind)
    held_items = [i for i in items if i.kind == "quarantine"]
    proposals = [i for i in items if i.kind != "quarantine"]
    csrf = request.state.csrf
    filters = ('<form method="get" action="/ui/review" class="filters">'
               f'{field("namespace", "Namespace (empty: all)", namespace or "")}'
               f'{select("status", "Status", STATUSES, status, blank="")}'
               '<button type="submit">Show</button></form>')
    body = (
        f"{flash(params)}{filters}"
        f"<h2>Quarantine ({len(held_items)})</h2>"
        '<p class="muted">Writes held because they look like prompt injection. Approve to '
        "make one recallable, reject to delete it, or edit the text (screened again).</p>"
        + ("".join(_card(memory, i, csrf) for i in held_items) or "<p>Nothing held.</p>")
        + f"<h2>Maintenance proposals ({len(proposals)})</h2>"
        '<p class="muted">Judgement calls a maintenance run staged; rejecting one changes '
        "nothing and it is not proposed again. Unreviewed proposals expire.</p>"
        + ("".join(_card(memory, i, csrf) for i in proposals) or "<p>No proposals.</p>")
    )
    return page("Review", body, current="/review")


def decide(memory: Memory, request: Request) -> Response:
    data: dict[str, str] = request.state.form
    item_id = request.path_params["item_id"]
    decision = data.get("decision", "")
    try:
        result = memory.review_decide(item_id, decision, text=data.get("text") if
                                      decision == "edit" else None)
    except AideMemoireError as exc:
        return RedirectResponse(f"/ui/review?{urlencode({'error': str(exc)})}", 303)
    key = "ok" if result.applied else "error"
    return RedirectResponse(f"/ui/review?{urlencode({key: result.message})}", 303)


ROUTES: list[tuple[str, Any, list[str]]] = [
    ("/review", queue, ["GET"]), ("/review/{item_id}", decide, ["POST"]),
]
