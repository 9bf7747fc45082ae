"""A table's content hash, computed the same way on either backend.

Each row is encoded canonically: its columns in name order (the two schemas declare
some in different orders), each value tagged by kind, so SQLite's INTEGER and
PostgreSQL's BIGINT, REAL and DOUBLE PRECISION, BLOB and a vector read as float32 bytes
all encode alike when they hold the same value. A float holding an integer encodes as
that integer (SQLite may hand back 1 for a REAL column's 1.0); any other float by its
exact hexadecimal form, never a rounded decimal. The table's digest is SHA-256 over the
rows' digests ordered by their encoded key, so neither side's collation or physical
order matters: only which rows hold which values.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["TableDigest", "encode_value"]

_EXACT_INT = 2**53  # above this a double no longer holds every integer


def encode_value(value: Any) -> Any:
    """A JSON value standing for ``value``, equal on both backends for equal values."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value.is_integer() and abs(value) < _EXACT_INT:
            return int(value)
        return {"f": value.hex()}
    if isinstance(value, bytes | bytearray | memoryview):
        return {"b": bytes(value).hex()}
    raise TypeError(f"no canonical encoding for a {type(value).__name__} value")


@dataclass
class TableDigest:
    """Rows fed one at a time (columns in the step's order); the count and hash after."""

    key_positions: tuple[int, ...]  # the key's columns within a row; () = the whole row
    _entries: list[tuple[str, bytes]] = field(default_factory=list)

    def add(self, row: tuple[Any, ...] | list[Any]) -> None:
        values = [encode_value(v) for v in row]
        text = json.dumps(values, ensure_ascii=False, separators=(",", ":"))
        key = (json.dumps([values[i] for i in self.key_positions], separators=(",", ":"))
               if self.key_positions else text)
        self._entries.append((key, hashlib.sha256(text.encode()).digest()))

    @property
    def rows(self) -> int:
        return len(self._entries)

    def hexdigest(self) -> str:
        total = hashlib.sha256(f"{len(self._entries)}\n".encode())
        for key, digest in sorted(self._entries):
            total.update(key.encode())
            total.update(digest)
        return total.hexdigest()
