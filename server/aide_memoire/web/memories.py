"""Memories: namespaces with counts, the hybrid search with each hit's ranks, filters."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..engine.core.models import Hit
from ..engine.core.validate import validate_namespace
from ..engine.storage import browse as queries
from .html import HELD_NOTE, esc, field, flash, memory_url, page, select, table, url
from .memory_page import ROUTES as DETAIL_ROUTES

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from ..engine.facade.memory import Memory

__all__ = ["ROUTES", "pick_namespace"]

KINDS = ("note", "learning", "turn", "fact", "summary")
TIERS = ("active", "all")


def pick_namespace(request: Request, counts: dict[str, Any]) -> str:
    """The asked-for namespace, else the one with the most memories, else 'default'."""
    chosen = request.query_params.get("namespace", "")
    if chosen:
        return validate_namespace(chosen)
    if not counts:
        return "default"
    return max(counts, key=lambda ns: sum(counts[ns].values()))


def _preview(text: str, limit: int = 160) -> str:
    cut = text if len(text) <= limit else text[:limit] + "..."
    return f'<span class="held-inline">{esc(cut)}</span>'


def _namespaces(counts: dict[str, dict[str, int]], current: str) -> str:
    rows = []
    for ns, by_status in counts.items():
        total = sum(by_status.values())
        detail = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items()))
        mark = ' aria-current="true"' if ns == current else ""
        rows.append([f'<a href="{esc(url("/", namespace=ns))}"{mark}>{esc(ns)}</a>',
                     f'<span class="num">{total}</span>', esc(detail)])
    return table(["Namespace", "Memories", "By status"], rows, caption="Namespaces")


def _filters(q: dict[str, str], namespaces: list[str]) -> str:
    return (
        '<form method="get" action="/ui/" class="filters" role="search">'
        f'{select("namespace", "Namespace", namespaces, q["namespace"], blank="")}'
        f'{field("q", "Search (hybrid recall)", q["q"], kind="search")}'
        f'{select("kind", "Kind", KINDS, q["kind"])}'
        f'{field("tag", "Tag", q["tag"])}'
        f'{field("since", "From", q["since"], kind="date")}'
        f'{field("until", "Until", q["until"], kind="date")}'
        f'{select("status", "Status", queries.STATUSES, q["status"])}'
        f'{select("tier", "Tier (search)", TIERS, q["tier"], blank="")}'
        '<button type="submit">Show</button></form>'
    )


def _stage(hit: Hit) -> str:
    ranks = " · ".join(f"{esc(name)} #{rank}" for name, rank in sorted(hit.ranks.items()))
    scores = " · ".join(f"{esc(name)} {value:.3f}" for name, value in sorted(hit.scores.items()))
    return f'<span class="ranks">{ranks or "-"}</span><br><span class="muted">{scores}</span>'


def _search(memory: Memory, q: dict[str, str]) -> str:
    status = q["status"]
    hits = memory.recall(
        q["q"], namespace=q["namespace"], limit=25, kinds=[q["kind"]] if q["kind"] else None,
        tags=[q["tag"]] if q["tag"] else None, since=q["since"] or None,
        until=q["until"] or None,
        include_archived=q["tier"] == "all" or status == "archived",
        include_superseded=status == "superseded",
    )
    if status:
        hits = [h for h in hits if h.status == status]
    rows = [[str(i), f"{hit.score:.3f}", _stage(hit), esc(hit.kind), esc(hit.status),
             _preview(hit.content), f'<a href="{esc(memory_url(hit.namespace, hit.id))}">'
             f"{esc(hit.id)}</a>"] for i, hit in enumerate(hits, 1)]
    return (f'<h2>Search results for <q>{esc(q["q"])}</q></h2>'
            '<p class="muted">The same recall as the tools: keyword (BM25) and, when live, '
            'dense ranks fused, then lifecycle scoring. Each hit shows the rank every '
            'stage gave it.</p>'
            + table(["#", "Score", "Stage ranks / scores", "Kind", "Status", "Text", "Id"], rows,
                    caption=f"{len(hits)} hits"))


def _listing(memory: Memory, q: dict[str, str]) -> str:
    db = memory.internals.db
    with db.read() as conn:
        rows = queries.list_memories(
            conn, db.dialect, q["namespace"], kind=q["kind"], tag=q["tag"], since=q["since"],
            until=_next_day(q["until"]), status=q["status"], limit=50)
    cells = [[esc(r.created_at[:16].replace("T", " ")), esc(r.kind), esc(r.status),
              _preview(r.preview), f'<a href="{esc(memory_url(r.namespace, r.id))}">'
              f"{esc(r.id)}</a>"] for r in rows]
    return ("<h2>Newest memories</h2>"
            + table(["Created (UTC)", "Kind", "Status", "Text", "Id"], cells,
                    caption=f"latest {len(rows)} matching (at most 50)"))


def _next_day(day: str) -> str:
    from datetime import date, timedelta

    return (date.fromisoformat(day) + timedelta(days=1)).isoformat() if day else ""


def memories(memory: Memory, request: Request) -> Response:
    with memory.internals.db.read() as conn:
        counts = queries.namespace_counts(conn)
    params = request.query_params
    q = {k: params.get(k, "").strip() for k in
         ("q", "kind", "tag", "since", "until", "status", "tier")}
    q["namespace"] = pick_namespace(request, counts)
    for day in ("since", "until"):
        if q[day]:
            _check_day(q[day], day)
    results = _search(memory, q) if q["q"] else _listing(memory, q)
    body = (
        f'{flash(params)}<div class="cols"><aside>{_namespaces(counts, q["namespace"])}</aside>'
        f'<section aria-label="Search and list">{_filters(q, list(counts) or ["default"])}'
        f'<p class="note" role="note">{esc(HELD_NOTE)}</p>{results}</section></div>'
    )
    return page("Memories", body, current="/")


def _check_day(value: str, name: str) -> None:
    from datetime import date

    from ..engine.core.errors import InvalidInput

    try:
        date.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"{name} must be a date like 2026-01-31, got {value!r}") from None


ROUTES: list[tuple[str, Any, list[str]]] = [("/", memories, ["GET"]), *DETAIL_ROUTES]
