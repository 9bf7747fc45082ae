"""Injected: what the prompt hook put before each prompt, per session, and why; a person
marks an injected memory helpful or not (lifecycle feedback, as the MCP tool records)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.responses import RedirectResponse

from ..engine.core.errors import AideMemoireError
from ..hooks.injections import describe_reasons, read_injections
from .html import HELD_NOTE, esc, field, flash, form, memory_url, page, url

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from ..engine.facade.memory import Memory

__all__ = ["ROUTES"]

SHOWN = 200
OUTCOMES = {"helpful": "Helpful", "unhelpful": "Not helpful"}


def _reasons(entry: dict[str, Any]) -> str:
    shown = describe_reasons(entry)
    return esc(shown) if shown else '<span class="muted">ids only</span>'


def _memory(entry: dict[str, Any], namespace: str, csrf: str, back: str) -> str:
    memory_id = str(entry.get("id", ""))
    buttons = "".join(
        form("/ui/injected/feedback", csrf,
             f'<input type="hidden" name="id" value="{esc(memory_id)}">'
             f'<input type="hidden" name="namespace" value="{esc(namespace)}">'
             f'<input type="hidden" name="outcome" value="{esc(outcome)}">'
             f'<input type="hidden" name="back" value="{esc(back)}">', label,
             cls="inline" + (" danger" if outcome == "unhelpful" else ""))
        for outcome, label in OUTCOMES.items())
    return (f'<li><a href="{esc(memory_url(namespace, memory_id))}">{esc(memory_id)}</a> '
            f'<span class="muted">{_reasons(entry)}</span>{buttons}</li>')


def injected(memory: Memory, request: Request) -> Response:
    params = request.query_params
    session = params.get("session", "") or None
    entries = read_injections(memory.settings.home, session_id=session, limit=SHOWN)
    csrf = request.state.csrf
    back = url("/injected", session=session)
    filters = ('<form method="get" action="/ui/injected" class="filters">'
               + field("session", "Session (empty: all)", session or "")
               + '<button type="submit">Show</button></form>')
    cards = []
    for entry in reversed(entries):  # newest first
        namespace = str(entry.get("namespace", ""))
        sid = str(entry.get("session_id") or "")
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(float(entry.get("time", 0))))
        items = "".join(_memory(m, namespace, csrf, back)
                        for m in entry.get("memories", []) if isinstance(m, dict))
        cards.append(
            '<article class="card">'
            f'<h3>{esc(stamp)} UTC · <a href="{esc(url("/injected", session=sid))}">'
            f'{esc(sid or "no session")}</a></h3>'
            f'<p class="muted">{esc(namespace)} · served by {esc(entry.get("served_by"))}</p>'
            f'<p>Prompt: <span class="held-inline">{esc(entry.get("prompt", ""))}</span></p>'
            f"<ul>{items}</ul></article>")
    body = (f"{flash(params)}{filters}"
            '<p class="muted">What the prompt hook put before each prompt (newest first, at '
            f"most {SHOWN}), with the scores that passed the gate. Mark a memory helpful or "
            "not: recall weighs it accordingly. A reply that used a memory counts as "
            "helpful by itself.</p>"
            f'<p class="note" role="note">{esc(HELD_NOTE)}</p>'
            + ("".join(cards) or "<p>Nothing injected yet.</p>"))
    return page("Injected", body, current="/injected")


def feedback(memory: Memory, request: Request) -> Response:
    data: dict[str, str] = request.state.form
    back = data.get("back", "")
    if not back.startswith("/ui/injected"):  # only ever back to this page
        back = "/ui/injected"
    joiner = "&" if "?" in back else "?"
    outcome = data.get("outcome", "")
    try:
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}")
        result = memory.feedback(data.get("id", ""), outcome,
                                 namespace=data.get("namespace", ""))
    except (AideMemoireError, ValueError) as exc:
        return RedirectResponse(f"{back}{joiner}{urlencode({'error': str(exc)})}", 303)
    message = f"{result.id}: marked {OUTCOMES[outcome].lower()} (utility now {result.estimate})"
    return RedirectResponse(f"{back}{joiner}{urlencode({'ok': message})}", 303)


ROUTES: list[tuple[str, Any, list[str]]] = [
    ("/injected", injected, ["GET"]), ("/injected/feedback", feedback, ["POST"]),
]
