"""RowFilter rendered as PostgreSQL SQL: lists as ``= ANY(?)`` arrays, tags through
``json_array_elements_text`` (tags stay JSON text, as in SQLite; see schema.py).

The same clauses as data/sqlite/filters.py, in the same order, so that a filter keeps
the same rows on both backends (the shared repository tests compare them).
"""

from __future__ import annotations

from typing import Any

from ... import clock
from ..filter import RowFilter

__all__ = ["where_pg"]


def where_pg(where: RowFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """A WHERE fragment (without WHERE) and its parameters."""
    a = alias
    clauses = [f"{a}.namespace = ANY(?)", f"{a}.status = ANY(?)"]
    params: list[Any] = [list(where.namespaces), list(where.statuses)]
    if where.kinds:
        clauses.append(f"{a}.kind = ANY(?)")
        params.append(list(where.kinds))
    if where.tags:
        clauses.append(
            f"EXISTS (SELECT 1 FROM json_array_elements_text({a}.tags::json) AS t(tag) "
            "WHERE t.tag = ANY(?))"
        )
        params.append(list(where.tags))
    if where.min_importance is not None:
        clauses.append(f"{a}.importance >= ?")
        params.append(where.min_importance)
    when = f"COALESCE({a}.observed_at, {a}.created_at)"
    if where.as_of is not None:
        # Valid at that moment (from its observed time), not yet closed: as SQLite.
        moment = clock.format_time(where.as_of)
        clauses.append(f"COALESCE({a}.valid_from, {a}.created_at) <= ?")
        clauses.append(f"({a}.valid_to IS NULL OR {a}.valid_to > ?)")
        params.extend([moment, moment])
    if where.since is not None:
        clauses.append(f"{when} >= ?")
        params.append(clock.format_time(where.since))
    if where.until is not None:
        clauses.append(f"{when} <= ?")
        params.append(clock.format_time(where.until))
    return " AND ".join(clauses), params
