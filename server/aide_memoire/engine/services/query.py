"""What recall and listing share: namespaces, limits and the row filter, validated."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..core import domain, fields
from ..core import validate as v
from ..core.errors import InvalidInput
from ..storage.store import RowFilter

__all__ = ["LIMIT_MAX", "check_equals", "check_limit", "namespaces", "row_filter"]

LIMIT_MAX = domain.RESULTS_MAX


def namespaces(namespace: str | Sequence[str]) -> list[str]:
    names = [namespace] if isinstance(namespace, str) else list(namespace)
    if not names:
        raise InvalidInput("give at least one namespace")
    return [v.validate_namespace(name) for name in names]


def check_limit(limit: object, *, maximum: int = LIMIT_MAX) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidInput(f"limit must be a whole number from 1 to {maximum}, got {limit!r}")
    return limit


def check_equals(given: Mapping[str, object]) -> dict[str, Any]:
    """The exact-match filters a caller gave, each a declared filterable field, checked
    as its value is on a write; None means no filter."""
    allowed = {f.name: f for f in fields.filterable()}
    out: dict[str, Any] = {}
    for name, value in given.items():
        declared = allowed.get(name)
        if declared is None:
            raise InvalidInput(f"no filter {name!r}; the exact-match filters are "
                               f"{', '.join(sorted(allowed)) or 'none'}")
        if value is not None:
            out[name] = v.check_value(declared, value, max_bytes=domain.CONTENT_MAX_BYTES)
    return out


def row_filter(
    namespace: str | Sequence[str],
    tags: Sequence[str] | None,
    kinds: Sequence[str] | None,
    min_importance: float | None,
    since: datetime | str | None,
    until: datetime | str | None,
    as_of: datetime | str | None = None,
    *,
    include_archived: bool = False,
    include_superseded: bool = False,
    equals: Mapping[str, object] | None = None,
) -> RowFilter:
    moment = v.parse_time(as_of, field="as_of")
    return RowFilter(
        equals=check_equals(equals or {}),
        namespaces=namespaces(namespace),
        kinds=[v.validate_kind(k) for k in kinds] if kinds else None,
        tags=v.validate_tags(tags) or None,
        min_importance=(
            v.validate_importance(min_importance) if min_importance is not None else None
        ),
        since=v.parse_time(since, field="since"),
        until=v.parse_time(until, field="until"),
        as_of=moment,
        # Back then, a memory superseded or archived since was still current.
        statuses=("active", "superseded", "archived") if moment
        else ("active", *(("archived",) if include_archived else ()),
              *(("superseded",) if include_superseded else ())),
    )
