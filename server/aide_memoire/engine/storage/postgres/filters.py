"""RowFilter rendered as PostgreSQL SQL: lists as ``= ANY(?)`` arrays, tags through
``json_array_elements_text`` (tags stay JSON text, as in SQLite; see schema.py).

The importance and time clauses are SQLite's renderer's own (portable as written), so
a filter keeps the same rows on both backends (the shared repository tests compare them).
"""

from __future__ import annotations

from typing import Any

from ..filter import RowFilter
from ..portable.filters import portable_clauses

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
    more, values = portable_clauses(where, a)
    return " AND ".join([*clauses, *more]), [*params, *values]
