"""Recall's reads of its candidates on PostgreSQL, batched within one snapshot.

Recall asks which dense candidates pass its filter, then the lifecycle adjuster reads
their usage, the facts adjuster which of them were superseded (and whether those
pass), and recall the rows it returns: four statements, each a round trip, over nearly
the same rowids. Inside a read-only snapshot (snapshot.py) the first of them to miss
reads usage, supersession and (given a filter) the filter's verdict at once and keeps
them in the snapshot's memo; the others read only the rowids not yet covered (usually
none). Outside one (a write transaction) each reads the server, as before.

The rows themselves are read only for the rowids ``records`` is asked for (the few
that are returned): decoding every column of the 300 candidates cost more client CPU
(~3 ms a recall) than the round trip it saved, on a machine whose recall wall time
is its CPU time times the load. The rowids travel as one array written as text
(``?::bigint[]``: no per-element dumping), so each statement's text is the same
whatever the number of rows and psycopg prepares it after a few uses.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from ...core.models import MemoryRecord
from ..protocol import Connection
from ..rows import COLUMNS, record_from_row
from .snapshot import memo

__all__ = ["Usage", "passing", "records", "replacements", "usage"]

# (rowid, importance, utility, access count, created_at, last_accessed_at, helpful votes)
Usage = tuple[int, float, float, int, str, str | None, int]

_USAGE = ("m.importance, m.utility, m.access_count, m.created_at, m.last_accessed_at, "
          "COALESCE(f.helpful, 0)")
_USAGE_JOIN = "LEFT JOIN memory_feedback f ON f.memory_id = m.id"
_REPLACED_JOIN = "LEFT JOIN memories r ON r.id = m.superseded_by AND r.namespace = m.namespace"
_ROWS = ", ".join(f"m.{column}" for column in COLUMNS)


def _usage(rowid: Any, values: Sequence[Any]) -> Usage:
    imp, util, count, created, accessed, helpful = values
    return (int(rowid), float(imp), float(util), int(count), str(created), accessed,
            int(helpful))


def _array(rowids: Iterable[int]) -> str:
    return "{" + ",".join(str(int(r)) for r in rowids) + "}"


class _Memo:
    """The snapshot memo's share for these reads: by rowid, the record, its usage and
    what superseded it (None: no such row, or none); by filter, which rows pass it."""

    def __init__(self, found: dict[Hashable, Any]) -> None:
        self.rows: dict[int, MemoryRecord | None] = found.setdefault("rows", {})
        self.uses: dict[int, Usage | None] = found.setdefault("usage", {})
        self.replaced: dict[int, int | None] = found.setdefault("replaced_by", {})
        self.passes: dict[tuple[str, str], dict[int, bool]] = found.setdefault("passes", {})
        # The keyword search's rows (keyword.py): recall asks for their usage after the
        # dense candidates', so the first read takes those not yet read along.
        self.searched: set[int] = found.setdefault("searched", set())

    def read(self, conn: Connection, rowids: Sequence[int],
             where: tuple[str, Sequence[Any]] | None = None) -> None:
        """Read the usage and supersession of ``rowids`` in one statement; with ``where``
        (a clause on ``m`` and its parameters) also whether each row passes it."""
        asked = set(rowids)
        rowids = [*rowids, *sorted(r for r in self.searched
                                   if r not in self.uses and r not in asked)]
        test = f", ({where[0]})" if where is not None else ""
        passes = self.passes.setdefault(_key(where), {}) if where is not None else {}
        for r, *values in conn.execute(
            f"SELECT m.rowid, {_USAGE}, r.rowid{test} FROM memories m "
            f"{_USAGE_JOIN} {_REPLACED_JOIN} WHERE m.rowid = ANY(?::bigint[])",
            [*(where[1] if where is not None else ()), _array(rowids)],
        ):
            rowid = int(r)
            self.uses[rowid] = _usage(rowid, values[:6])
            self.replaced[rowid] = None if values[6] is None else int(values[6])
            if where is not None:
                passes[rowid] = bool(values[7])
        for rowid in rowids:  # a rowid with no row: nothing to read again either
            self.uses.setdefault(rowid, None)
            self.replaced.setdefault(rowid, None)
            if where is not None:
                passes.setdefault(rowid, False)


def _key(where: tuple[str, Sequence[Any]] | None) -> tuple[str, str]:
    return ("", "") if where is None else (where[0], repr(list(where[1])))


def _of(conn: Connection) -> _Memo | None:
    found = memo(conn)
    return None if found is None else _Memo(found)


def passing(conn: Connection, rowids: Iterable[int], clause: str, params: Sequence[Any]
            ) -> set[int]:
    """The rowids among ``rowids`` whose rows pass ``clause`` (on ``m``)."""
    ids = list(dict.fromkeys(rowids))
    kept = _of(conn)
    if kept is None:
        return {int(r) for (r,) in conn.execute(
            f"SELECT m.rowid FROM memories m WHERE {clause} AND m.rowid = ANY(?::bigint[])",
            [*params, _array(ids)])}
    known = kept.passes.get(_key((clause, params)), {})
    missing = [r for r in ids if r not in known]
    if missing:
        kept.read(conn, missing, (clause, params))
        known = kept.passes[_key((clause, params))]
    return {r for r in ids if known[r]}


def records(conn: Connection, rowids: Iterable[int]) -> dict[int, MemoryRecord]:
    """The rows of ``rowids`` that exist (the MemoryRows.records contract)."""
    ids = list(dict.fromkeys(rowids))
    kept = _of(conn)
    missing = ids if kept is None else [r for r in ids if r not in kept.rows]
    read = {int(r): record_from_row(values) for r, *values in conn.execute(
        f"SELECT m.rowid, {_ROWS} FROM memories m WHERE m.rowid = ANY(?::bigint[])",
        (_array(missing),))} if missing else {}
    if kept is None:
        return read
    kept.rows.update({r: read.get(r) for r in missing})
    return {r: row for r in ids if (row := kept.rows[r]) is not None}


def usage(conn: Connection, rowids: Sequence[int]) -> list[Usage]:
    """Usage of the rows of ``rowids`` that exist (MemoryRows.usage)."""
    ids = list(dict.fromkeys(rowids))
    kept = _of(conn)
    if kept is None:
        return [_usage(r, values) for r, *values in conn.execute(
            f"SELECT m.rowid, {_USAGE} FROM memories m {_USAGE_JOIN} "
            "WHERE m.rowid = ANY(?::bigint[])", (_array(ids),))]
    missing = [r for r in ids if r not in kept.uses]
    if missing:
        kept.read(conn, missing)
    return [u for r in ids if (u := kept.uses[r]) is not None]


def replacements(conn: Connection, rowids: Sequence[int]) -> list[tuple[int, int]]:
    """(rowid, rowid of the memory that superseded it) among ``rowids``."""
    ids = list(dict.fromkeys(rowids))
    kept = _of(conn)
    if kept is None:
        return [(int(a), int(b)) for a, b in conn.execute(
            f"SELECT m.rowid, r.rowid FROM memories m {_REPLACED_JOIN.replace('LEFT ', '')} "
            "WHERE m.rowid = ANY(?::bigint[])", (_array(ids),))]
    missing = [r for r in ids if r not in kept.replaced]
    if missing:
        kept.read(conn, missing)
    return [(r, b) for r in ids if (b := kept.replaced[r]) is not None]
