"""RowFilter rendered as SQLite SQL (tags through ``json_each``)."""

from __future__ import annotations

from typing import Any

from ..filter import RowFilter
from ..portable.filters import portable_clauses

__all__ = ["where_sql"]


def _marks(values: object) -> str:
    return ",".join("?" * len(values))  # type: ignore[arg-type]


def where_sql(where: RowFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """A WHERE fragment (without WHERE) and its parameters."""
    a = alias
    clauses = [f"{a}.namespace IN ({_marks(where.namespaces)})",
               f"{a}.status IN ({_marks(where.statuses)})"]
    params: list[Any] = [*where.namespaces, *where.statuses]
    if where.kinds:
        clauses.append(f"{a}.kind IN ({_marks(where.kinds)})")
        params.extend(where.kinds)
    if where.tags:
        clauses.append(
            f"EXISTS (SELECT 1 FROM json_each({a}.tags) "
            f"WHERE json_each.value IN ({_marks(where.tags)}))"
        )
        params.extend(where.tags)
    more, values = portable_clauses(where, a)
    return " AND ".join([*clauses, *more]), [*params, *values]


