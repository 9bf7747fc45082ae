"""Recall adjusters of the facts layer (see ``Recaller.adjusters``).

``supersession``: a memory that names what replaced it ranks just below its replacement,
which takes its place (joining the candidates if the query missed it, and if it passes
the filters). Between two conversation turns only for a question about the present
("where does Priya work?"): a turn is a record of what was said, and a question about
what happened ("what did Priya say about the move?") asks for the older as much as the
newer.
``bridges``: the second hop. Memories that share a rare entity with the top hits gain a
little, for questions whose evidence is spread over several memories.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.text import query_shape
from ..storage.protocol import Connection

if TYPE_CHECKING:  # the prompt hook's keyword path runs supersession without the recaller
    from ..recall.recaller import RecallRequest
    from ..storage.repositories import MemoryRows

# (connection, request, fused scores by rowid) -> adjusted scores; see Recaller.adjusters.
Adjuster = Callable[[Connection, "RecallRequest", dict[int, float]], dict[int, float]]

__all__ = ["BridgeTuning", "bridges", "supersession"]

_MARGIN = 1e-4


def supersession(rows: MemoryRows) -> Adjuster:
    """The supersession adjuster, reading replacements through ``rows``."""

    def adjust(
        conn: Connection,
        request: RecallRequest,
        fused: dict[int, float],
    ) -> dict[int, float]:
        return _supersession(rows, conn, request, fused)

    return adjust


def _supersession(
    rows: MemoryRows,
    conn: Connection,
    request: RecallRequest,
    fused: dict[int, float],
) -> dict[int, float]:
    if not fused:
        return fused
    window = max(request.limit * 3, 30)
    top = sorted(fused, key=lambda r: -fused[r])[:window]
    old = rows.replacements(conn, top)
    if not old:
        return fused
    if not query_shape(request.query).present:
        said = rows.speakers(conn, {r for pair in old for r in pair})
        old = [(a, b) for a, b in old if a not in said or b not in said]
        if not old:
            return fused
    allowed = rows.passing(conn, [r for _, r in old], request.where)
    out = dict(fused)
    # Oldest replacement first, so that chains (A <- B <- C) settle in order.
    for rowid, replacement in sorted(old, key=lambda x: x[1]):
        if replacement not in allowed:
            continue  # as_of before the replacement, or filtered out: nothing to rank under
        mine = out[rowid]
        theirs = out.get(replacement)
        if theirs is None or mine >= theirs:
            # The replacement answers what the replaced memory matched: it takes that
            # place, and the replaced one ranks just below it.
            out[replacement] = mine + _MARGIN
            out[rowid] = mine
    return out


@dataclass(frozen=True)
class BridgeTuning:
    seeds: int = 5  # top hits whose entities are followed
    weight: float = 0.1  # most a bridged memory gains (fused scores run 0..~1.2)
    max_share: float = 0.05  # entities in more memories than this share are too common
    fanout: int = 200  # at most this many memories per entity


def bridges(tuning: BridgeTuning, rows: MemoryRows) -> Any:
    """An adjuster that adds the second hop with ``tuning``."""
    sizes: dict[tuple[str, ...], tuple[float, int]] = {}

    def adjust(
        conn: Connection,
        request: RecallRequest,
        fused: dict[int, float],
    ) -> dict[int, float]:
        if not fused or tuning.weight <= 0:
            return fused
        seeds = sorted(fused, key=lambda r: -fused[r])[: tuning.seeds]
        top = fused[seeds[0]] or 1.0
        marks = ",".join("?" * len(seeds))
        links = conn.execute(
            f"SELECT me.memory_rowid, me.entity_id, e.mentions FROM memory_entities me "
            f"JOIN entities e ON e.id = me.entity_id WHERE me.memory_rowid IN ({marks})",
            seeds,
        ).fetchall()
        if not links:
            return fused
        size = max(2, _namespace_size(rows, conn, request, sizes))
        limit = max(3, int(tuning.max_share * size))
        entity_weight: dict[int, float] = {}
        for rowid, entity, mentions in links:
            if int(mentions) > limit or int(mentions) < 2:
                continue
            idf = math.log(size / int(mentions)) / math.log(size)
            seed = fused[int(rowid)] / top
            entity_weight[int(entity)] = max(entity_weight.get(int(entity), 0.0), idf * seed)
        if not entity_weight:
            return fused
        ids = list(entity_weight)
        gain: dict[int, float] = {}
        for rowid, entity in conn.execute(
            f"SELECT memory_rowid, entity_id FROM memory_entities WHERE entity_id IN "
            f"({','.join('?' * len(ids))})",
            ids,
        ):
            rowid = int(rowid)
            if rowid in seeds:
                continue
            gain[rowid] = max(gain.get(rowid, 0.0), entity_weight[int(entity)])
        fresh = [r for r in gain if r not in fused]
        allowed = rows.passing(conn, fresh, request.where) if fresh else set()
        out = dict(fused)
        for rowid, g in gain.items():
            if rowid in out:
                out[rowid] += tuning.weight * g
            elif rowid in allowed:
                out[rowid] = tuning.weight * g
        return out

    return adjust


_SIZE_TTL_S = 30.0


def _namespace_size(
    rows: MemoryRows, conn: Connection, request: RecallRequest,
    sizes: dict[tuple[str, ...], tuple[float, int]],
) -> int:
    """Memories in the request's namespaces; counted at most every 30 s (only the ratio of
    an entity's mentions to it matters, which a few writes barely move)."""
    names = tuple(sorted(request.where.namespaces))
    now = time.monotonic()
    cached = sizes.get(names)
    if cached is not None and now - cached[0] < _SIZE_TTL_S:
        return cached[1]
    count = rows.count_in(conn, names)
    if len(sizes) > 1024:
        sizes.clear()
    sizes[names] = (now, count)
    return count
