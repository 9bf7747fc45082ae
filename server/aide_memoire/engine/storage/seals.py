"""SQLite side of the audited fields' seals (trust/seal.py): the TEMP triggers that note
which memories a transaction touched, and the rows the seals are computed from. Here
beside the Protocols rather than in sqlite/ because the trust layer calls it directly
(it has no PostgreSQL twin: the context registers it for a SQLite store only).

TEMP objects live in the connection that made them, so only the engine's own
connections record touches; an edit made from any other connection records nothing.

What a seal is (the sealed fields, their hash and hints, an event's detail) is here too:
schema step 12 seals the memories already stored (storage/sqlite_steps.py), and storage
imports no feature. When to seal and how a seal is verified stay in trust/seal.py.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .protocol import Connection

__all__ = ["ACTION", "HINT", "SEALED_FIELDS", "all_detail", "ensure_touch_triggers",
           "event_detail", "field_rows", "seal_of", "take_touched"]

ACTION = "memory.fields"
SEALED_FIELDS = (
    "namespace", "kind", "status", "importance", "source", "tags", "metadata",
    "observed_at", "valid_from", "valid_to", "superseded_by",
)
HINT = 4


def _statements(columns: Sequence[str]) -> tuple[str, ...]:
    watched = ", ".join(columns)
    return (
        "CREATE TEMP TABLE IF NOT EXISTS memory_touched (memory_rowid INTEGER PRIMARY KEY)",
        "CREATE TEMP TRIGGER IF NOT EXISTS memory_touched_insert AFTER INSERT ON main.memories "
        "BEGIN INSERT OR IGNORE INTO memory_touched VALUES (new.rowid); END",
        f"CREATE TEMP TRIGGER IF NOT EXISTS memory_touched_update AFTER UPDATE OF {watched} "
        "ON main.memories BEGIN INSERT OR IGNORE INTO memory_touched VALUES (new.rowid); END",
    )


def ensure_touch_triggers(conn: Connection, columns: Sequence[str]) -> None:
    """Make this connection's TEMP triggers once (they live as long as it does)."""
    if conn.execute("SELECT 1 FROM temp.sqlite_master WHERE name = 'memory_touched_update'"
                    ).fetchone() is None:
        for statement in _statements(columns):
            conn.execute(statement)


def take_touched(tx: Connection) -> list[int]:
    """The rowids this transaction inserted or changed so far, forgotten once read."""
    rowids = [int(r) for (r,) in tx.execute("SELECT memory_rowid FROM memory_touched")]
    if rowids:
        tx.execute("DELETE FROM memory_touched")
    return rowids


def field_rows(conn: Connection, columns: Sequence[str], rowids: Sequence[int] | None = None,
               ) -> Iterator[tuple[str, str, tuple[Any, ...]]]:
    """(id, namespace, the columns' values) of the given memories, or of all, by rowid."""
    select = f"SELECT id, namespace, {', '.join(columns)} FROM memories"
    if rowids is None:
        batches: list[Sequence[int] | None] = [None]
    else:
        batches = [rowids[i:i + 500] for i in range(0, len(rowids), 500)]
    for batch in batches:
        if batch is None:
            cursor = conn.execute(f"{select} ORDER BY rowid")
        else:
            cursor = conn.execute(f"{select} WHERE rowid IN ({','.join('?' * len(batch))})",
                                  tuple(batch))
        for row in cursor:
            yield str(row[0]), str(row[1]), tuple(row[2:])


def _part(memory_id: str, field: str, value: Any) -> bytes:
    return json.dumps([memory_id, field, value], ensure_ascii=False).encode(
        "utf-8", "surrogatepass")


def seal_of(memory_id: str, values: Iterable[Any], fields: Iterable[str] = SEALED_FIELDS) -> str:
    """The seal of one memory's audited fields: full sha256, ':', a hint per field."""
    parts = [_part(memory_id, field, value) for field, value in zip(fields, values, strict=True)]
    full = hashlib.sha256(b"\x00".join(parts)).hexdigest()
    hints = "".join(hashlib.sha256(part).hexdigest()[:HINT] for part in parts)
    return f"{full}:{hints}"


def event_detail(rows: Iterable[tuple[str, str, tuple[Any, ...]]]
                  ) -> tuple[dict[str, Any], set[str]]:
    seals: dict[str, str] = {}
    namespaces: set[str] = set()
    for memory_id, namespace, values in rows:
        seals[memory_id] = seal_of(memory_id, values)
        namespaces.add(namespace)
    return {"fields": list(SEALED_FIELDS), "memories": seals}, namespaces


def all_detail(tx: Connection) -> dict[str, Any] | None:
    """The ``memory.fields`` detail sealing every memory as it is now; None if none."""
    detail, _ = event_detail(field_rows(tx, SEALED_FIELDS))
    return detail if detail["memories"] else None
