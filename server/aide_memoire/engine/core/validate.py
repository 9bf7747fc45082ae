"""Validation of everything a caller hands the engine, with messages that say how to fix it."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from . import domain, fields
from .errors import InvalidContent, InvalidInput, InvalidNamespace

__all__ = [
    "KINDS",
    "NAMESPACE_MAX",
    "normalize_namespace",
    "check_value",
    "parse_time",
    "validate_content",
    "validate_fields",
    "validate_id",
    "validate_importance",
    "validate_kind",
    "validate_metadata",
    "validate_namespace",
    "validate_record",
    "validate_tags",
]

# The limits themselves are declared once, in domain.py; re-exported for older callers.
KINDS = domain.KINDS
NAMESPACE_MAX = domain.NAMESPACE_MAX
TAG_MAX = domain.TAG_MAX
TAGS_MAX = domain.TAGS_MAX
METADATA_MAX_BYTES = domain.METADATA_MAX_BYTES
METADATA_MAX_DEPTH = domain.METADATA_MAX_DEPTH
ID_MAX = domain.ID_MAX
FIELD_MAX = domain.FIELD_MAX
INT_MAX = 2**63 - 1  # SQLite's INTEGER
YEAR_MIN, YEAR_MAX = domain.YEAR_MIN, domain.YEAR_MAX
_ID_RE = re.compile(domain.ID_PATTERN)
_NAMESPACE_RE = re.compile(domain.NAMESPACE_PATTERN)
_TAG_RE = re.compile(domain.TAG_PATTERN)


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


# Letters that render as blank space although Unicode files them as letters or symbols.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")
_INVISIBLE = frozenset(("Cc", "Cf", "Cs", "Cn"))  # private use (Co) may draw an icon


def _visible(ch: str) -> bool:
    """Whether a character shows: not a control, format (zero-width, bidi, tag, soft
    hyphen), separator or combining mark on its own, nor a blank-looking filler."""
    category = unicodedata.category(ch)
    return (not ch.isspace() and category not in _INVISIBLE and category[0] not in "ZM"
            and ch not in _BLANK_LETTERS)


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
    if not any(_visible(ch) for ch in content):
        raise InvalidContent(
            "content has no visible characters (only whitespace, zero-width or other "
            "invisible characters); a memory needs some text"
        )
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


def validate_importance(importance: object, *, field: str = "importance") -> float:
    if isinstance(importance, bool) or not isinstance(importance, int | float):
        raise InvalidInput(f"{field} must be a number between 0 and 1")
    value = float(importance)
    if not math.isfinite(value):
        given = "NaN" if math.isnan(value) else "infinity"
        raise InvalidInput(f"{field} must be a finite number from {domain.IMPORTANCE_MIN:g} "
                           f"to {domain.IMPORTANCE_MAX:g}, not {given}")
    if not domain.IMPORTANCE_MIN <= value <= domain.IMPORTANCE_MAX:
        raise InvalidInput(f"{field} {importance!r} is outside "
                           f"{domain.IMPORTANCE_MIN:g}..{domain.IMPORTANCE_MAX:g}")
    return value


def _check_depth(value: object, *, field: str) -> None:
    """Refuse nesting deeper than METADATA_MAX_DEPTH, walking without recursion."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping | list | tuple):
            if depth > METADATA_MAX_DEPTH:
                raise InvalidInput(
                    f"{field} is nested more than {METADATA_MAX_DEPTH} levels deep; flatten it"
                )
            children = item.values() if isinstance(item, Mapping) else item
            stack.extend((child, depth + 1) for child in children)


def validate_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInput("metadata must be a JSON object (a dict)")
    _check_depth(metadata, field="metadata")
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
    return _in_range(parsed, field=field, given=value)


def _in_range(parsed: datetime, *, field: str, given: object) -> datetime:
    try:
        moment = parsed.astimezone(UTC)
    except OverflowError:
        moment = None
    if moment is None or not YEAR_MIN <= moment.year <= YEAR_MAX:
        raise InvalidInput(
            f"{field} {str(given)[:40]!r} is outside the years {YEAR_MIN} to {YEAR_MAX} "
            "that aide-memoire stores"
        )
    return moment


def validate_id(value: object, *, field: str = "id") -> str:
    """A memory id: 1 to ID_MAX characters of letters, digits and . _ : -."""
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{field} must be a non-empty string")
    if len(value) > ID_MAX or not _ID_RE.match(value):
        raise InvalidInput(
            f"{field} {value[:40]!r} is not a valid id: 1 to {ID_MAX} letters, digits "
            "and . _ : -, starting with a letter or digit"
        )
    return value


def _check_label(value: object, field: str) -> None:
    if value is not None and (not isinstance(value, str) or len(value) > FIELD_MAX):
        raise InvalidInput(f"{field} must be text of at most {FIELD_MAX} characters")


def _check_count(value: object, field: str, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= INT_MAX:
        raise InvalidInput(f"{field} must be a whole number from 0 to {INT_MAX}")


def _check_real(value: object, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
        value
    ) or not -1e6 <= value <= 1e6:
        raise InvalidInput(f"{field} {value!r} must be a finite number")
    return float(value)


def _label(value: object, field: str) -> str | None:
    _check_label(value, field)
    return None if value is None else str(value)


def _count(value: object, field: str) -> int:
    _check_count(value, field)
    assert isinstance(value, int)  # _check_count refused anything else
    return value


def _status(value: object, field: str) -> str:
    if value not in domain.STATUSES:
        raise InvalidInput(f"{field} {value!r} is not one of {', '.join(domain.STATUSES)}")
    return str(value)


def check_value(f: fields.MemoryField, value: object, *, max_bytes: int) -> object:
    """One field's value checked by what it is (its kind of value, fields.py)."""
    if value is None and f.optional:
        return None
    name = f.name
    match f.kind:
        case "text":
            return validate_content(value, max_bytes=max_bytes)
        case "kind":
            return validate_kind(value)
        case "tags":
            return validate_tags(value)  # type: ignore[arg-type]
        case "score":
            return validate_importance(value, field=name)
        case "json":
            return validate_metadata(value)  # type: ignore[arg-type]
        case "time":
            return parse_time(value, field=name)
        case "id":
            return validate_id(value, field=name)
        case "namespace":
            return validate_namespace(value)
        case "label":
            return _label(value, name)
        case "count":
            return _count(value, name)
        case "real":
            return _check_real(value, name)
        case "status":
            return _status(value, name)
        case "hash":
            raise InvalidInput(f"{name} is computed by the store; it cannot be given")


def validate_fields(
    values: Mapping[str, object], *, max_bytes: int, what: str = "store"
) -> dict[str, Any]:
    """The settable fields a caller gave (``store``/``update``), each checked as its
    declaration says; an unknown name is refused with the names allowed."""
    allowed = {f.name: f for f in fields.FIELDS if f.settable}
    out: dict[str, Any] = {}
    for name, value in values.items():
        declared = allowed.get(name)
        if declared is None:
            raise InvalidInput(
                f"{what} has no field {name!r}; it takes {', '.join(sorted(allowed))}"
            )
        out[name] = check_value(declared, value, max_bytes=max_bytes)
    return out


def validate_record(record: Any, *, max_bytes: int) -> None:
    """Every field of a full memory record (an imported one) checked as a new write is.

    Raises InvalidInput naming the field; the record itself is not changed.
    """
    validate_id(record.id)
    validate_namespace(record.namespace)
    validate_kind(record.kind)
    validate_content(record.content, max_bytes=max_bytes)
    if record.context is not None:
        validate_content(record.context, max_bytes=max_bytes)
    validate_tags(record.tags)
    validate_importance(record.importance)
    validate_metadata(record.metadata)
    if not math.isfinite(record.utility) or not -1e6 <= record.utility <= 1e6:
        raise InvalidInput(f"utility {record.utility!r} must be a finite number")
    _check_count(record.access_count, "access_count")
    _check_count(record.position, "position", allow_none=True)
    for name in ("superseded_by", "reply_to"):
        if getattr(record, name) is not None:
            validate_id(getattr(record, name), field=name)
    for name in ("source", "session_id", "speaker", "role"):
        _check_label(getattr(record, name), name)
    for name in ("created_at", "updated_at", "observed_at", "valid_from", "valid_to",
                 "last_accessed_at"):
        moment = getattr(record, name)
        if moment is not None:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            _in_range(moment, field=name, given=moment.isoformat())


_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "true or false",
               int: "a number", float: "a number", type(None): "null"}


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type, for messages ('a list', 'null')."""
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _not_finite(value: object) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, str):
        try:
            return not math.isfinite(float(value))
        except ValueError:
            return False
    return False


def describe_validation(errors: Iterable[Mapping[str, Any]]) -> str:
    """pydantic's errors (``exc.errors()``) as plain sentences: each field, what it must
    be and what was given; no error codes, URLs or Python type names."""
    parts = []
    for error in errors:
        where = ".".join(str(p) for p in error.get("loc", ())) or "the value"
        given = error.get("input")
        if _not_finite(given):
            what = "must be a finite number"
        elif error.get("type") == "model_type" or error.get("type") == "dict_type":
            what = f"must be a JSON object, not {json_type(given)}"
        elif error.get("type") == "missing":
            what = "is required"
        elif error.get("type") == "extra_forbidden":
            what = "is not a known field"
        else:
            what = str(error.get("msg", "is not valid")).replace("Input should be", "must be")
        shown = repr(given) if isinstance(given, str | int | float) else json_type(given)
        if error.get("type") != "missing" and len(shown) <= 60:
            what += f" (got {shown})"
        parts.append(f"{where} {what}")
    return "; ".join(parts)
