"""Every field of a memory that is stored or shown, as text the screen can read.

A secret or an order can ride in any field, not only ``content``: tags, source, a turn's
speaker, session id and role, the preceding context, and metadata. Metadata is read
decoded, key by key and value by value (a PEM key in a JSON string has escaped newlines
when encoded; decoded it is a PEM key again), recursively to a bounded depth; a string
value that itself holds JSON is decoded once more.

``record_fields`` accepts any record-like object (the write pipeline's row, an imported
``MemoryRecord``, a mapping of changed fields), so every write path screens the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "TEXT_FIELDS", "record_fields"]

TEXT_FIELDS = ("content", "context", "source", "speaker", "session_id", "role")
# Deeper metadata is not read further (it is still stored): validation bounds depth first.
MAX_DEPTH = 32


def _get(record: Any, name: str) -> Any:
    if isinstance(record, Mapping):
        return record.get(name)
    return getattr(record, name, None)


def _metadata(value: Any, path: str, depth: int) -> Iterator[tuple[str, str]]:
    if depth > MAX_DEPTH:
        return
    if isinstance(value, Mapping):
        keys = [str(k) for k in value]
        if keys:
            yield f"{path} keys", "\n".join(keys)
        for key, item in value.items():
            if isinstance(item, str) and item:
                # Read with its key, as a config line would be: "REDIS_PASS: x" is a
                # secret where neither half alone is.
                yield f"{path}.{key}", f"{key}: {item}"
                yield from _json_inside(item, f"{path}.{key}", depth + 1)
            else:
                yield from _metadata(item, f"{path}.{key}", depth + 1)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _metadata(item, f"{path}[{index}]", depth + 1)
    elif isinstance(value, str) and value:
        yield path, value
        yield from _json_inside(value, path, depth + 1)


def _json_inside(value: str, path: str, depth: int) -> Iterator[tuple[str, str]]:
    """A string value that holds JSON, decoded once more."""
    stripped = value.strip()
    if stripped[:1] in "{[" and depth < MAX_DEPTH:
        try:
            inner = json.loads(stripped)
        except ValueError:
            return
        if isinstance(inner, (Mapping, list)):
            yield from _metadata(inner, f"{path}(json)", depth)


def record_fields(record: Any) -> list[tuple[str, str]]:
    """``(field, text)`` for each non-empty text field, tag and metadata key or value.

    A field the record does not carry is left out; a mapping of changed fields gives
    only those."""
    out: list[tuple[str, str]] = []
    for name in TEXT_FIELDS:
        value = _get(record, name)
        if isinstance(value, str) and value:
            out.append((name, value))
    tags = _get(record, "tags")
    if isinstance(tags, str):
        tags = [tags]
    if isinstance(tags, (list, tuple)):
        out.extend(("tags", tag) for tag in tags if isinstance(tag, str) and tag)
    metadata = _get(record, "metadata")
    if isinstance(metadata, Mapping) and metadata:
        out.extend(_metadata(metadata, "metadata", 0))
    return out
