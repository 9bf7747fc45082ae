"""The web page's read model: listings the public ``Memory`` methods do not offer.

Read-only, each bounded by a LIMIT and led by an index (namespace + created_at, namespace
+ session + position, the entities' keys), so a page stays fast at 100k memories. The SQL
runs as written on both backends but for the tag test, each dialect's (``_TAG_TEST``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from .protocol import Connection, Dialect

__all__ = [
    "Row", "day_memories", "day_sessions", "days", "edges_among", "feedback_of",
    "growth", "list_memories", "mentions", "namespace_counts", "replaced_by",
    "session_turns", "top_entities",
]

STATUSES = ("active", "quarantined", "superseded", "archived")
_ROW = ("m.id, m.namespace, m.kind, m.status, m.created_at, substr(m.content, 1, 240), "
        "m.tags, m.session_id, m.speaker, m.position")


@dataclass(frozen=True)
class Row:
    """One memory in a listing: its text cut to a preview (still held text)."""

    id: str
    namespace: str
    kind: str
    status: str
    created_at: str
    preview: str
    tags: str
    session_id: str | None
    speaker: str | None
    position: int | None


def _rows(cursor: Any) -> list[Row]:
    return [Row(str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5]), str(r[6]),
                r[7], r[8], None if r[9] is None else int(r[9])) for r in cursor]


def namespace_counts(conn: Connection) -> dict[str, dict[str, int]]:
    """namespace -> status -> count (the listing's left column): totals from the
    (namespace, created_at) index, the rarer statuses from their partial index."""
    totals = {str(ns): int(n) for ns, n in conn.execute(
        "SELECT namespace, count(*) FROM memories GROUP BY namespace")}
    out: dict[str, dict[str, int]] = {ns: {} for ns in sorted(totals)}
    for ns, status, n in conn.execute(
        "SELECT namespace, status, count(*) FROM memories WHERE status != 'active' "
        "GROUP BY namespace, status"
    ):
        out[str(ns)][str(status)] = int(n)
    for ns, by_status in out.items():
        active = totals[ns] - sum(by_status.values())
        if active:
            by_status["active"] = active
    return out


# Whether a memory's tags (JSON text on both backends) hold one tag.
_TAG_TEST: dict[Dialect, str] = {
    "sqlite": "EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = ?)",
    "postgres": "EXISTS (SELECT 1 FROM json_array_elements_text(m.tags::json) AS t(tag) "
                "WHERE t.tag = ?)",
}


def list_memories(
    conn: Connection, dialect: Dialect, namespace: str, *, kind: str = "", tag: str = "",
    since: str = "", until: str = "", status: str = "", limit: int = 50,
) -> list[Row]:
    """Newest first, every status unless one is named (quarantined ones included)."""
    clauses, params = ["m.namespace = ?"], [namespace]
    for clause, value in (("m.kind = ?", kind), ("m.status = ?", status),
                          ("m.created_at >= ?", since), ("m.created_at < ?", until),
                          (_TAG_TEST[dialect], tag)):
        if value:
            clauses.append(clause)
            params.append(value)
    return _rows(conn.execute(
        f"SELECT {_ROW} FROM memories m WHERE {' AND '.join(clauses)} "
        "ORDER BY m.created_at DESC LIMIT ?", [*params, limit]))


def replaced_by(conn: Connection, namespace: str, memory_id: str) -> list[tuple[str, str]]:
    """(id, created_at) of the memories that ``memory_id`` superseded."""
    return [(str(i), str(c)) for i, c in conn.execute(
        "SELECT id, created_at FROM memories WHERE namespace = ? AND superseded_by = ? "
        "ORDER BY created_at LIMIT 20", (namespace, memory_id))]


def feedback_of(conn: Connection, memory_id: str) -> tuple[int, int, int, str | None] | None:
    found = conn.execute(
        "SELECT helpful, unhelpful, wrong, last_at FROM memory_feedback WHERE memory_id = ?",
        (memory_id,)).fetchone()
    return None if found is None else (int(found[0]), int(found[1]), int(found[2]), found[3])


def days(conn: Connection, namespace: str, *, limit: int = 31) -> list[tuple[str, int]]:
    """(YYYY-MM-DD, memories) for the latest days with memories, newest first."""
    return [(str(d), int(n)) for d, n in conn.execute(
        "SELECT substr(created_at, 1, 10) AS d, count(*) FROM memories WHERE namespace = ? "
        "GROUP BY d ORDER BY d DESC LIMIT ?", (namespace, limit))]


def _day_range(day: str) -> tuple[str, str]:
    start = date.fromisoformat(day)
    return start.isoformat(), (start + timedelta(days=1)).isoformat()


def day_memories(conn: Connection, namespace: str, day: str, *, limit: int = 200) -> list[Row]:
    """A day's memories that are not conversation turns (those show per session)."""
    lo, hi = _day_range(day)
    return _rows(conn.execute(
        f"SELECT {_ROW} FROM memories m WHERE m.namespace = ? AND m.created_at >= ? "
        "AND m.created_at < ? AND m.session_id IS NULL ORDER BY m.created_at LIMIT ?",
        (namespace, lo, hi, limit)))


def day_sessions(conn: Connection, namespace: str, day: str,
                 *, limit: int = 100) -> list[tuple[str, int, str, str]]:
    """(session id, turns, first, last) of the sessions captured that day."""
    lo, hi = _day_range(day)
    return [(str(s), int(n), str(a), str(b)) for s, n, a, b in conn.execute(
        "SELECT session_id, count(*), min(created_at), max(created_at) FROM memories "
        "WHERE namespace = ? AND created_at >= ? AND created_at < ? AND session_id IS NOT NULL "
        "GROUP BY session_id ORDER BY min(created_at) LIMIT ?", (namespace, lo, hi, limit))]


def session_turns(
    conn: Connection, namespace: str, session_id: str, *, limit: int = 500
) -> list[Row]:
    return _rows(conn.execute(
        f"SELECT {_ROW} FROM memories m WHERE m.namespace = ? AND m.session_id = ? "
        "ORDER BY m.position LIMIT ?", (namespace, session_id, limit)))


def growth(conn: Connection, *, months: int = 12) -> list[tuple[str, int]]:
    """(YYYY-MM, memories created) for the latest months, newest first."""
    return [(str(m), int(n)) for m, n in conn.execute(
        "SELECT substr(created_at, 1, 7) AS mo, count(*) FROM memories GROUP BY mo "
        "ORDER BY mo DESC LIMIT ?", (months,))]


def top_entities(
    conn: Connection, namespace: str, *, limit: int = 40
) -> list[tuple[str, str, int]]:
    """(name, display, mentions) of the most mentioned entities."""
    return [(str(n), str(d), int(c)) for n, d, c in conn.execute(
        "SELECT name, display, mentions FROM entities WHERE namespace = ? "
        "ORDER BY mentions DESC, name LIMIT ?", (namespace, limit))]


def edges_among(conn: Connection, namespace: str, names: list[str]) -> list[tuple[str, str, float]]:
    """(name a, name b, weight) of the graph's edges between the given entities."""
    if len(names) < 2:
        return []
    marks = ",".join("?" * len(names))
    return [(str(a), str(b), float(w)) for a, b, w in conn.execute(
        "SELECT ea.name, eb.name, max(g.weight) FROM entities ea "
        "JOIN entity_edges g ON g.a = ea.id JOIN entities eb ON eb.id = g.b "
        f"WHERE ea.namespace = ? AND ea.name IN ({marks}) AND eb.name IN ({marks}) "
        "AND eb.namespace = ea.namespace GROUP BY ea.name, eb.name LIMIT 400",
        [namespace, *names, *names])]


def mentions(conn: Connection, namespace: str, name: str, *, limit: int = 20) -> list[Row]:
    """The newest memories that mention one entity (led by the mention index)."""
    return _rows(conn.execute(
        f"SELECT {_ROW} FROM entities e JOIN memory_entities me ON me.entity_id = e.id "
        "JOIN memories m ON m.rowid = me.memory_rowid WHERE e.namespace = ? AND e.name = ? "
        "AND m.status = 'active' ORDER BY me.memory_rowid DESC LIMIT ?",
        (namespace, name, limit)))
