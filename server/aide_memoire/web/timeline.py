"""Timeline: memories and captured sessions by day, per namespace; a session's turns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..engine.core.errors import InvalidInput
from ..engine.storage import browse as queries
from .html import HELD_NOTE, esc, field, memory_url, page, select, table, url
from .memories import pick_namespace

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from ..engine.facade.memory import Memory

__all__ = ["ROUTES"]


def _session_url(namespace: str, session_id: str) -> str:
    return f"/ui/session/{quote(namespace, safe='')}/{quote(session_id, safe='')}"


def _text(text: str, limit: int = 200) -> str:
    cut = text if len(text) <= limit else text[:limit] + "..."
    return f'<span class="held-inline">{esc(cut)}</span>'


def timeline(memory: Memory, request: Request) -> Response:
    with memory.internals.db.read() as conn:
        counts = queries.namespace_counts(conn)
        namespace = pick_namespace(request, counts)
        by_day = queries.days(conn, namespace)
        day = request.query_params.get("day", "") or (by_day[0][0] if by_day else "")
        try:
            items = queries.day_memories(conn, namespace, day) if day else []
            sessions = queries.day_sessions(conn, namespace, day) if day else []
        except ValueError:
            raise InvalidInput(f"day must be a date like 2026-01-31, got {day!r}") from None
    top = max((n for _, n in by_day), default=1)
    mark = ' aria-current="date"'
    bars = "".join(
        f'<li><a href="{esc(url("/timeline", namespace=namespace, day=d))}"'
        f'{mark if d == day else ""}><span class="day">{esc(d)}</span>'
        f'<meter min="0" max="{top}" value="{n}" aria-hidden="true"></meter>'
        f'<span class="num">{n}</span></a></li>' for d, n in by_day)
    picker = ('<form method="get" action="/ui/timeline" class="filters">'
              + select("namespace", "Namespace", list(counts) or ["default"], namespace, blank="")
              + field("day", "Day", day, kind="date")
              + '<button type="submit">Show</button></form>')
    session_rows = [[f'<a href="{esc(_session_url(namespace, s))}">{esc(s)}</a>', str(n),
                     esc(a[11:16]), esc(b[11:16])] for s, n, a, b in sessions]
    memory_rows = [[esc(r.created_at[11:16]), esc(r.kind), esc(r.status), _text(r.preview),
                    f'<a href="{esc(memory_url(r.namespace, r.id))}">{esc(r.id)}</a>']
                   for r in items]
    body = (
        f"{picker}<div class=\"cols\"><aside><h2>Days</h2>"
        f'<ol class="days" aria-label="Latest days with memories">{bars}</ol></aside>'
        f'<section><h2>{esc(day or "No memories yet")}</h2>'
        f'<p class="note" role="note">{esc(HELD_NOTE)}</p>'
        + table(["Session", "Turns", "First (UTC)", "Last"], session_rows,
                caption="Captured sessions")
        + table(["Time (UTC)", "Kind", "Status", "Text", "Id"], memory_rows,
                caption="Other memories (at most 200)")
        + "</section></div>"
    )
    return page("Timeline", body, current="/timeline")


def session(memory: Memory, request: Request) -> Response:
    namespace = request.path_params["namespace"]
    session_id = request.path_params["session_id"]
    with memory.internals.db.read() as conn:
        turns = queries.session_turns(conn, namespace, session_id)
    rows = [[str(t.position if t.position is not None else ""), esc(t.speaker or ""),
             _text(t.preview, 240), f'<a href="{esc(memory_url(t.namespace, t.id))}">'
             f"{esc(t.id)}</a>"] for t in turns]
    body = (f'<p>Namespace {esc(namespace)} · {len(turns)} turns (at most 500).</p>'
            f'<p class="note" role="note">{esc(HELD_NOTE)}</p>'
            + table(["#", "Speaker", "Text", "Id"], rows, caption="Turns in order"))
    return page(f"Session {session_id}", body, current="/timeline")


ROUTES: list[tuple[str, Any, list[str]]] = [
    ("/timeline", timeline, ["GET"]),
    ("/session/{namespace}/{session_id}", session, ["GET"]),
]
