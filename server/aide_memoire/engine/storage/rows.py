"""The memory row as the data layer reads and writes it: shared by every backend.

A backend's repositories take and return these types, so the features above them never
see a cursor's tuples or a dialect's JSON. The column list, the codec and
the INSERT's values derive from the one declaration of a memory's fields
(``core/fields.py``), in its stored order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..core import clock, fields
from ..core.compose import IndexedTurn
from ..core.errors import StoreError
from ..core.models import MemoryRecord, NewRow
from .filter import RowFilter
from .protocol import Connection, Cursor

__all__ = [
    "COLUMNS", "FIXED", "JSON_FIELDS", "TIME_FIELDS", "NewRow", "RowFilter", "StoredTurn",
    "WriteHook", "Written", "content_hash", "encode", "indexed", "insert_values",
    "inserted_rowid", "record_from_row", "record_values",
]

# Derived from the one declaration (core/fields.py), in the stored order.
COLUMNS: tuple[str, ...] = tuple(f.name for f in fields.FIELDS)
TIME_FIELDS: tuple[str, ...] = tuple(f.name for f in fields.FIELDS if f.value.codec == "time")
JSON_FIELDS: tuple[str, ...] = tuple(f.name for f in fields.FIELDS if f.value.codec == "json")
_WRITTEN = tuple(f.name for f in fields.written())
# Columns an update may not set: the identity, and the hash that follows the text.
FIXED = ("id", "namespace", "content_hash")


def inserted_rowid(cursor: Cursor) -> int:
    """The rowid an INSERT just made (SQLite reports one for every rowid table)."""
    rowid = cursor.lastrowid
    if rowid is None:
        raise StoreError("the store did not report the new row's id; nothing was written")
    return int(rowid)


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Written:
    """A row just inserted: its rowid, id, what was asked, and its index in the batch."""

    rowid: int
    id: str
    row: NewRow
    index: int


# (tx, rows just inserted, the batch's vectors or None) -> None; see Memory.after_write.
WriteHook = Callable[[Connection, list[Written], Any], None]


@dataclass(frozen=True)
class StoredTurn:
    """A turn already in the store, as context for the next ones."""

    id: str
    position: int
    speaker: str | None
    content: str


def indexed(row: NewRow | MemoryRecord) -> IndexedTurn:
    return IndexedTurn(
        kind=row.kind,
        content=row.content,
        speaker=row.speaker,
        tags=list(row.tags),
        observed_at=row.observed_at,
        context=row.context,
    )


def encode(name: str, value: Any) -> Any:
    """A field's value as its column stores it (JSON text, fixed-width UTC time)."""
    if name in JSON_FIELDS:
        return json.dumps(value, ensure_ascii=False)
    if name in TIME_FIELDS:
        return clock.format_time(value) if value is not None else None
    return value


def insert_values(row: NewRow, memory_id: str, stamp: datetime) -> list[Any]:
    """The INSERT's values for a new row, in ``COLUMNS`` order: what the write path gave,
    else what the declaration says the store writes (hash, stamps) or the default."""
    observed = row.observed_at
    given = {name: getattr(row, name) for name in _WRITTEN}
    given["id"] = memory_id
    computed: dict[str, Any] = {"hash": content_hash(row.content), "stamp": stamp,
                                "observed_or_stamp": observed or stamp}
    values: list[Any] = []
    for f in fields.FIELDS:
        if f.name in given:
            value = given[f.name]
        elif f.on_insert is not None:
            value = computed[f.on_insert]
        else:
            value = _DEFAULTS.get(f.name)
        values.append(encode(f.name, value))
    return values


def record_values(record: MemoryRecord) -> list[Any]:
    """A whole record's values (an import), in ``COLUMNS`` order."""
    return [content_hash(record.content) if name == "content_hash"
            else encode(name, getattr(record, name)) for name in COLUMNS]


def record_from_row(values: Sequence[Any]) -> MemoryRecord:
    data = dict(zip(COLUMNS, values, strict=True))
    data.pop("content_hash")
    for key in JSON_FIELDS:
        data[key] = json.loads(data[key])
    for key in TIME_FIELDS:
        data[key] = clock.parse_stored(data[key])
    return MemoryRecord(**data)


# What a column holds when neither the caller nor the store sets it: the record model's
# defaults (MemoryRecord's, generated from the same declaration).
_DEFAULTS: dict[str, Any] = {
    name: info.get_default(call_default_factory=True)
    for name, info in MemoryRecord.model_fields.items() if not info.is_required()
}
