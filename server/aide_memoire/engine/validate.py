"""Validation of everything a caller hands the engine, with messages that say how to fix it."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from .errors import InvalidContent, InvalidInput, InvalidNamespace

__all__ = [
    "KINDS",
    "NAMESPACE_MAX",
    "normalize_namespace",
    "parse_time",
    "validate_content",
    "validate_importance",
    "validate_kind",
    "validate_metadata",
    "validate_namespace",
    "validate_tags",
]

KINDS = ("note", "learning", "turn", "fact", "summary")
NAMESPACE_MAX = 128
TAG_MAX = 64
TAGS_MAX = 32
METADATA_MAX_BYTES = 64_000
_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]*$")
_TAG_RE = re.compile(r"^[^\x00-\x1f,]+$")


def validate_namespace(namespace: object) -> str:
    """Return the namespace if it is a safe name, else raise InvalidNamespace."""
    if not isinstance(namespace, str) or not namespace:
        raise InvalidNamespace("namespace must be a non-empty string such as 'project:my-app'")
    if len(namespace) > NAMESPACE_MAX:
        raise InvalidNamespace(
            f"namespace is {len(namespace)} characters; at most {NAMESPACE_MAX} are allowed"
        )
    if not _NAMESPACE_RE.match(namespace) or ".." in namespace:
        raise InvalidNamespace(
            f"namespace {namespace[:40]!r} is not allowed: use letters, digits and . _ : @ -, "
            "starting with a letter or digit, and no '..' (e.g. 'project:my-app')"
        )
    return namespace


def normalize_namespace(raw: str, *, prefix: str = "") -> str:
    """Make any text (e.g. a project folder name) into a valid namespace."""
    cleaned = re.sub(r"[^A-Za-z0-9._:@-]+", "-", raw).strip("-._:@")
    cleaned = re.sub(r"\.{2,}", ".", cleaned)
    name = f"{prefix}{cleaned or 'default'}"
    if len(name) > NAMESPACE_MAX:
        name = name[:NAMESPACE_MAX].rstrip("-._:@")
    return validate_namespace(name)


def validate_content(content: object, *, max_bytes: int) -> str:
    """Return content as text if it is non-empty, valid UTF-8 and not too large."""
    if isinstance(content, bytes):
        try:
            content = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidContent(
                f"content is not valid UTF-8 (bad byte at offset {exc.start}); "
                "store text, not binary data"
            ) from None
    if not isinstance(content, str):
        raise InvalidContent(f"content must be text, not {type(content).__name__}")
    if not content.strip():
        raise InvalidContent("content is empty; a memory needs some text")
    if "\x00" in content:
        raise InvalidContent("content contains a NUL character; store text, not binary data")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidContent(
            f"content is not valid Unicode text (unpaired surrogate at index {exc.start})"
        ) from None
    if size > max_bytes:
        raise InvalidContent(
            f"content is {size} bytes; the limit is {max_bytes} bytes. Split it into several "
            "memories or raise max_content_bytes"
        )
    return content


def validate_kind(kind: object) -> str:
    if kind not in KINDS:
        raise InvalidInput(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    return str(kind)


def validate_tags(tags: Iterable[str] | str | None) -> list[str]:
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = [t for t in tags.split(",")]
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidInput(f"tags must be strings, got {type(tag).__name__}")
        tag = tag.strip()
        if not tag:
            continue
        if len(tag) > TAG_MAX or not _TAG_RE.match(tag):
            raise InvalidInput(
                f"tag {tag[:40]!r} is not allowed: at most {TAG_MAX} characters, "
                "no commas or control characters"
            )
        if tag not in out:
            out.append(tag)
    if len(out) > TAGS_MAX:
        raise InvalidInput(f"{len(out)} tags given; at most {TAGS_MAX} are allowed")
    return out


def validate_importance(importance: object) -> float:
    if isinstance(importance, bool) or not isinstance(importance, int | float):
        raise InvalidInput("importance must be a number between 0 and 1")
    value = float(importance)
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise InvalidInput(f"importance {importance!r} is outside 0..1")
    return value


def validate_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInput("metadata must be a JSON object (a dict)")
    try:
        encoded = json.dumps(dict(metadata), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"metadata must be JSON-serialisable: {exc}") from None
    if len(encoded.encode("utf-8")) > METADATA_MAX_BYTES:
        raise InvalidInput(f"metadata is larger than {METADATA_MAX_BYTES} bytes as JSON")
    loaded: dict[str, Any] = json.loads(encoded)
    return loaded


def parse_time(value: object, *, field: str = "time") -> datetime | None:
    """Accept a datetime or an ISO 8601 string; naive times are taken as UTC."""
    if value is None:
        return None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise InvalidInput(
                f"{field} {value!r} is not an ISO 8601 date or time (e.g. 2024-05-08T13:56:00Z)"
            ) from None
    else:
        raise InvalidInput(f"{field} must be an ISO 8601 string or a datetime")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
