"""The memory row as the data layer reads and writes it: shared by every backend.

A backend's repositories take and return these types, so the features above them never
see a cursor's tuples or a dialect's JSON. The column list is the ``memories`` table's
(migration 1 and later), in its stored order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..core import clock, domain
from ..core.compose import IndexedTurn
from ..core.errors import StoreError
from ..core.models import MemoryRecord
from .filter import RowFilter
from .protocol import Connection, Cursor

__all__ = [
    "COLUMNS", "TIME_FIELDS", "NewRow", "RowFilter", "StoredTurn", "WriteHook", "Written",
    "content_hash", "indexed", "inserted_rowid", "record_from_row",
]

COLUMNS = (
    "id", "namespace", "kind", "content", "content_hash", "tags", "importance", "source",
    "metadata", "created_at", "updated_at", "observed_at", "valid_from", "valid_to",
    "superseded_by", "status", "access_count", "last_accessed_at", "utility", "session_id",
    "speaker", "role", "position", "reply_to", "context",
)
TIME_FIELDS = (
    "created_at", "updated_at", "observed_at", "valid_from", "valid_to", "last_accessed_at",
)


def inserted_rowid(cursor: Cursor) -> int:
    """The rowid an INSERT just made (SQLite reports one for every rowid table)."""
    rowid = cursor.lastrowid
    if rowid is None:
        raise StoreError("the store did not report the new row's id; nothing was written")
    return int(rowid)


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


@dataclass
class NewRow:
    """What the write path hands the store for one new memory."""

    namespace: str
    kind: str
    content: str
    tags: list[str] = field(default_factory=list)
    importance: float = domain.IMPORTANCE_DEFAULT
    source: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    observed_at: datetime | None = None
    session_id: str | None = None
    speaker: str | None = None
    role: str | None = None
    position: int | None = None
    reply_to: str | None = None
    context: str | None = None
    status: str = "active"
    id: str | None = None


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


def record_from_row(values: Sequence[Any]) -> MemoryRecord:
    data = dict(zip(COLUMNS, values, strict=True))
    data.pop("content_hash")
    data["tags"] = json.loads(data["tags"])
    data["metadata"] = json.loads(data["metadata"])
    for key in TIME_FIELDS:
        data[key] = clock.parse_stored(data[key])
    return MemoryRecord(**data)
