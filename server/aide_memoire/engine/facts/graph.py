"""The entity graph: co-occurrence and name-similarity edges with weights that decay.

An edge's stored weight counts how often it was seen; its *effective* weight halves for
every ``HALF_LIFE_DAYS`` since it was last used (seen again or walked by ``related``),
so stale associations fade without a maintenance pass rewriting them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ..core import clock
from ..storage.filter import RowFilter
from ..storage.protocol import Connection
from ..storage.repositories import EntityGraph
from .models import RelatedEntity, RelatedMemory

__all__ = ["HALF_LIFE_DAYS", "add_edges", "add_similar", "related"]

HALF_LIFE_DAYS = 90.0
MAX_PER_MEMORY = 8  # pairs grow with the square: a long memory links its first names only
SIMILAR_WEIGHT = 0.5


def add_edges(tx: Connection, per_memory: Sequence[tuple[str, list[int]]]) -> None:
    """Co-occurrence: every pair of entities mentioned by one memory, one statement."""
    stamp = clock.format_time(clock.now())
    pairs: dict[tuple[str, int, int], int] = {}
    for namespace, entities in per_memory:
        ids = sorted(set(entities[:MAX_PER_MEMORY]))
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                pairs[(namespace, a, b)] = pairs.get((namespace, a, b), 0) + 1
    if pairs:
        tx.executemany(
            "INSERT INTO entity_edges (namespace, a, b, kind, weight, used_at) "
            "VALUES (?, ?, ?, 'cooccur', ?, ?) ON CONFLICT (a, b, kind) DO UPDATE SET "
            "weight = entity_edges.weight + excluded.weight, used_at = excluded.used_at",
            [(ns, a, b, n, stamp) for (ns, a, b), n in pairs.items()],
        )


def _similar(a: str, b: str) -> bool:
    """'alice' ~ 'alice smith' (a whole word of the other); 'postgres' ~ 'postgresql'."""
    if a == b:
        return False
    short, long_ = sorted((a, b), key=len)
    if short in long_.split():
        return True
    return len(short) >= 5 and long_.startswith(short) and " " not in long_


def add_similar(tx: Connection, entities: EntityGraph,
                new: Sequence[tuple[str, str, int]]) -> None:
    """Similarity edges from each new entity to existing names it resembles."""
    stamp = clock.format_time(clock.now())
    edges: list[tuple[str, int, int, str]] = []
    for namespace, name, entity_id in new:
        # Only names that can pass _similar, by index: a word of this name, a prefix of
        # it (5+ characters), or a name that starts with it. (A range on the first five
        # characters instead grew with the store: every "ops-0..." ticket matched.)
        exact = [*name.split(), *(name[:k] for k in range(5, len(name)))]
        for other_id, other in entities.named_like(tx, namespace, exact, name):
            if int(other_id) != entity_id and _similar(name, str(other)):
                a, b = sorted((entity_id, int(other_id)))
                edges.append((namespace, a, b, stamp))
    if edges:
        entities.add_similar_edges(tx, edges, SIMILAR_WEIGHT)


def _decayed(weight: float, used_at: str, now: datetime) -> float:
    used = clock.parse_stored(used_at) or now
    age = max(0.0, (now - used).total_seconds() / 86400.0)
    return float(weight) * float(0.5 ** (age / HALF_LIFE_DAYS))


def related(
    conn: Connection, namespace: str, start: list[int], *, depth: int, limit: int
) -> tuple[list[RelatedEntity], list[tuple[int, int]]]:
    """Entities within ``depth`` edges of ``start``, strongest path first; also the edges
    walked (to refresh their use)."""
    now = clock.now()
    best: dict[int, tuple[float, int]] = {e: (1.0, 0) for e in start}
    frontier = {e: 1.0 for e in start}
    walked: list[tuple[int, int]] = []
    for hop in range(1, depth + 1):
        if not frontier:
            break
        ids = list(frontier)
        marks = ",".join("?" * len(ids))
        rows = conn.execute(
            f"SELECT a, b, weight, used_at FROM entity_edges WHERE namespace = ? AND "
            f"(a IN ({marks}) OR b IN ({marks}))",
            [namespace, *ids, *ids],
        ).fetchall()
        nxt: dict[int, float] = {}
        for a, b, weight, used_at in rows:
            for here, there in ((int(a), int(b)), (int(b), int(a))):
                if here not in frontier:
                    continue
                strength = frontier[here] * (1.0 - 0.5 ** _decayed(weight, used_at, now))
                if strength > best.get(there, (0.0, 0))[0] and there not in start:
                    best[there] = (strength, hop)
                    nxt[there] = max(nxt.get(there, 0.0), strength)
                    walked.append((min(here, there), max(here, there)))
        frontier = nxt
    found = [(e, s, h) for e, (s, h) in best.items() if e not in start]
    found.sort(key=lambda x: (-x[1], x[2], x[0]))
    found = found[:limit]
    info = _entity_info(conn, [e for e, _, _ in found])
    out = [
        RelatedEntity(name=info[e][0], display=info[e][1], type=info[e][2], hops=h,
                      weight=round(s, 4), mentions=info[e][3])
        for e, s, h in found if e in info
    ]
    return out, walked


def _entity_info(conn: Connection, ids: list[int]) -> dict[int, tuple[str, str, str, int]]:
    if not ids:
        return {}
    rows = conn.execute(
        f"SELECT id, name, display, type, mentions FROM entities WHERE id IN "
        f"({','.join('?' * len(ids))})",
        ids,
    )
    return {int(i): (str(n), str(d), str(t), int(m)) for i, n, d, t, m in rows}


def refresh(tx: Connection, edges: Sequence[tuple[int, int]]) -> None:
    """Walking an edge is a use: its decay clock restarts."""
    stamp = clock.format_time(clock.now())
    tx.executemany(
        "UPDATE entity_edges SET used_at = ? WHERE a = ? AND b = ?",
        [(stamp, a, b) for a, b in set(edges)],
    )


def memories_of(
    conn: Connection, entities: EntityGraph, entity_names: dict[int, str], where: RowFilter,
    limit: int,
) -> list[RelatedMemory]:
    """Memories (passing the filter) that mention the given entities, most mentions first."""
    if not entity_names:
        return []
    return [
        RelatedMemory(id=i, content=c, entities=sorted({entity_names[e] for e in found}))
        for i, c, found in entities.mentioning(conn, list(entity_names), where, limit)
    ]
