"""RowFilter rendered as SQLite SQL (tags through ``json_each``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..filter import RowFilter
from ..portable.filters import portable_clauses
from ..protocol import Connection

__all__ = ["passing", "where_sql"]


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


def passing(conn: Connection, rowids: Iterable[int], where: RowFilter) -> set[int]:
    """The rowids among ``rowids`` that pass ``where``, looked up 500 at a time.

    NOT INDEXED: with a namespace in the filter, the planner would otherwise walk the
    namespace's index (every row of it) instead of looking the rowids up.
    """
    clause, params = where_sql(where, "m")
    ids = list(rowids)
    found: set[int] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found.update(
            int(r)
            for (r,) in conn.execute(
                f"SELECT m.rowid FROM memories m NOT INDEXED WHERE m.rowid IN "
                f"({','.join('?' * len(chunk))}) AND {clause}",
                [*chunk, *params],
            )
        )
    return found
