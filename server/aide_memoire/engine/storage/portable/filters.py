"""The row-filter clauses every backend runs as written: importance, time and the exact
matches of the fields declared filterable (core/fields.py)."""

from __future__ import annotations

from typing import Any

from ...core import clock, fields
from ..filter import RowFilter

__all__ = ["portable_clauses"]


def portable_clauses(where: RowFilter, a: str) -> tuple[list[str], list[Any]]:
    """The importance and time clauses, SQL every backend runs as written (the
    PostgreSQL renderer, storage/postgres/filters.py, shares them)."""
    clauses: list[str] = []
    params: list[Any] = []
    if where.min_importance is not None:
        clauses.append(f"{a}.importance >= ?")
        params.append(where.min_importance)
    when = f"COALESCE({a}.observed_at, {a}.created_at)"
    if where.as_of is not None:
        # What was valid at that moment (valid time: a memory recorded later about
        # an earlier event counts from its observed time), not yet closed.
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
    for name, value in where.equals.items():
        # Only declared columns reach the SQL text (a name is never taken from a caller).
        column = fields.field(name).name
        clauses.append(f"{a}.{column} = ?")
        params.append(value)
    return clauses, params
