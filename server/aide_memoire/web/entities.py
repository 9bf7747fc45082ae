"""Entities: the graph around a name (inline SVG drawn here; each node is a link that
re-centres it) and the facts about a subject now and at a chosen date."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..engine.core.errors import NotFound
from ..engine.storage import browse as queries
from .html import HELD_NOTE, esc, field, memory_url, page, select, table, url, when
from .memories import pick_namespace

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from ..engine.facade.memory import Memory
    from ..engine.facts.models import Fact, RelatedResult

__all__ = ["ROUTES", "graph_svg"]

W, H = 640, 420
RINGS = (0.0, 120.0, 190.0)


def graph_svg(result: RelatedResult, edges: list[tuple[str, str, float]], namespace: str) -> str:
    """Start names in the middle, then one ring per hop; edges from the store's graph."""
    nodes: dict[str, tuple[float, float, str, int]] = {}
    starts = result.start
    for i, name in enumerate(starts):
        angle = 2 * math.pi * i / max(1, len(starts))
        r = 0.0 if len(starts) == 1 else 40.0
        nodes[name] = (W / 2 + r * math.cos(angle), H / 2 + r * math.sin(angle), name, 0)
    for hop in (1, 2):
        ring = [e for e in result.entities if e.hops == hop and e.name not in nodes]
        for i, ent in enumerate(ring):
            angle = 2 * math.pi * i / max(1, len(ring)) + (0.3 if hop == 2 else 0.0)
            nodes[ent.name] = (W / 2 + RINGS[hop] * math.cos(angle) * 1.4,
                               H / 2 + RINGS[hop] * math.sin(angle) * 0.95, ent.display, hop)
    lines = [
        f'<line x1="{nodes[a][0]:.0f}" y1="{nodes[a][1]:.0f}" x2="{nodes[b][0]:.0f}" '
        f'y2="{nodes[b][1]:.0f}" class="edge" stroke-width="{1 + min(3.0, w):.1f}"/>'
        for a, b, w in edges if a in nodes and b in nodes]
    for ent in result.entities:  # a hop-1 entity is linked to the start even if its edge is cut
        if ent.hops == 1 and starts and not any(ent.name in (a, b) for a, b, _ in edges):
            s = nodes[starts[0]]
            n = nodes[ent.name]
            lines.append(f'<line x1="{s[0]:.0f}" y1="{s[1]:.0f}" x2="{n[0]:.0f}" '
                         f'y2="{n[1]:.0f}" class="edge"/>')
    circles = [
        f'<a href="{esc(url("/entities", namespace=namespace, name=name))}" '
        f'aria-label="{esc(label)}, {hop} hops"><circle cx="{x:.0f}" cy="{y:.0f}" '
        f'r="{14 if hop == 0 else 9}" class="hop{hop}"/><text x="{x:.0f}" y="{y + 24:.0f}" '
        f'text-anchor="middle">{esc(label[:24])}</text></a>'
        for name, (x, y, label, hop) in nodes.items()]
    return (f'<svg class="graph" viewBox="0 0 {W} {H}" role="img" '
            f'aria-label="Entities related to {esc(", ".join(starts))}">'
            f'{"".join(lines)}{"".join(circles)}</svg>')


def _facts(facts: list[Fact], caption: str, namespace: str) -> str:
    return table(["Predicate", "Value", "From", "To", "Memory"], [
        [esc(f.predicate), esc(f.object_text), esc(when(f.valid_from)), esc(when(f.valid_to)),
         f'<a href="{esc(memory_url(namespace, f.memory_id))}">{esc(f.memory_id)}</a>']
        for f in facts], caption=caption)


def entities(memory: Memory, request: Request) -> Response:
    params = request.query_params
    with memory.internals.db.read() as conn:
        counts = queries.namespace_counts(conn)
        namespace = pick_namespace(request, counts)
        top = queries.top_entities(conn, namespace)
    name = params.get("name", "").strip()
    as_of = params.get("as_of", "").strip()
    picker = ('<form method="get" action="/ui/entities" class="filters" role="search">'
              + select("namespace", "Namespace", list(counts) or ["default"], namespace, blank="")
              + f'{field("name", "Entity or subject", name)}'
              f'{field("as_of", "Facts at date", as_of, kind="date")}'
              '<button type="submit">Show</button></form>')
    known = " ".join(f'<a class="chip" href="{esc(url("/entities", namespace=namespace, name=n))}">'
                     f"{esc(d)} <span class=\"muted\">{c}</span></a>" for n, d, c in top)
    body = picker + f'<p aria-label="Most mentioned entities">{known or "No entities yet."}</p>'
    if name:
        body += _around(memory, namespace, name, as_of)
    return page("Entities", body, current="/entities")


def _around(memory: Memory, namespace: str, name: str, as_of: str) -> str:
    out = f"<h2>Around <q>{esc(name)}</q></h2>"
    try:
        # The mentions come from a bounded query below: related()'s own list reads every
        # mention of every related entity, seconds for a name in 10k+ memories.
        result = memory.related(name, namespace=namespace, depth=2, limit=30, memories=False)
    except NotFound as exc:
        result = None
        out += f'<p class="muted">{esc(exc)}</p>'
    if result is not None:
        with memory.internals.db.read() as conn:
            edges = queries.edges_among(conn, namespace,
                                        [*result.start, *(e.name for e in result.entities)])
        out += graph_svg(result, edges, namespace)
        out += table(["Entity", "Hops", "Weight", "Mentions"], [
            [f'<a href="{esc(url("/entities", namespace=namespace, name=e.name))}">'
             f"{esc(e.display)}</a>", str(e.hops), f"{e.weight:.2f}", str(e.mentions)]
            for e in result.entities], caption="Related entities")
        with memory.internals.db.read() as conn:
            rows = [r for start in result.start for r in queries.mentions(conn, namespace, start)]
        out += (f'<p class="note" role="note">{esc(HELD_NOTE)}</p>' + table(["Memory", "Text"], [
            [f'<a href="{esc(memory_url(namespace, r.id))}">{esc(r.id)}</a>',
             f'<span class="held-inline">{esc(r.preview[:200])}</span>'] for r in rows[:20]],
            caption=f"Newest memories that mention {', '.join(result.start)}"))
    now = memory.facts(name, namespace=namespace)
    out += "<h2>Facts</h2>" + _facts(now, "Holding now", namespace)
    if as_of:
        then = memory.facts(name, namespace=namespace, as_of=as_of + "T23:59:59Z")
        out += _facts(then, f"Holding at the end of {as_of}", namespace)
    return out


ROUTES: list[tuple[str, Any, list[str]]] = [("/entities", entities, ["GET"])]
