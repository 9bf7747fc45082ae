"""Redaction instead of refusal, for text a caller cannot fix: captured turns, imports.

``redact_secrets`` replaces each secret span (found on the original text and on its
normalised form, mapped back) with ``[redacted:<kind>]`` and reports kind and original
offsets, never the value. ``redact_record`` does the same for every text field of a
record (metadata values decoded, recursively) and says which fields it changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .fields import MAX_DEPTH, TEXT_FIELDS
from .secrets import scan_secrets

__all__ = ["Redaction", "RedactionFinding", "redact_record", "redact_secrets"]


@dataclass(frozen=True)
class RedactionFinding:
    """One redacted span: ``kind`` of secret at ``start:end`` of the original text."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Redaction:
    """``text`` with each secret replaced by ``[redacted:<kind>]``, and where they were."""

    text: str
    findings: tuple[RedactionFinding, ...]


_MAX_PASSES = 4


def _replace(text: str, findings: Any) -> str:
    parts: list[str] = []
    cursor = 0
    for finding in findings:  # sorted and non-overlapping
        parts.append(text[cursor:finding.start])
        parts.append(f"[redacted:{finding.rule}]")
        cursor = finding.end
    parts.append(text[cursor:])
    return "".join(parts)


def redact_secrets(text: str) -> Redaction:
    """Every secret in ``text`` replaced span by span; offsets refer to ``text``."""
    findings = scan_secrets(text)
    if not findings:
        return Redaction(text, ())
    redacted = _replace(text, findings)
    # Removing one secret can bring another into view: scan again, a few times at most.
    for _ in range(_MAX_PASSES):
        again = scan_secrets(redacted)  # markers themselves are never findings
        if not again:
            break
        redacted = _replace(redacted, again)
    else:
        redacted = "[redacted:unscannable]"  # never keep what the scanner still flags
    spans = tuple(RedactionFinding(f.rule, f.start, f.end) for f in findings)
    return Redaction(redacted, spans)


def _redact_value(value: Any, depth: int, kinds: list[str]) -> Any:
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, str):
        result = redact_secrets(value)
        kinds.extend(f.kind for f in result.findings)
        return result.text
    if isinstance(value, Mapping):
        return {key: _redact_item(str(key), item, depth + 1, kinds) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_value(item, depth + 1, kinds) for item in value]
    return value


def _redact_item(key: str, item: Any, depth: int, kinds: list[str]) -> Any:
    """A metadata value read with its key (as the screen reads it), the key kept."""
    if not isinstance(item, str):
        return _redact_value(item, depth, kinds)
    prefix = f"{key}: "
    result = redact_secrets(prefix + item)
    if result.findings and result.text.startswith(prefix):
        kinds.extend(f.kind for f in result.findings)
        return result.text[len(prefix):]
    return _redact_value(item, depth, kinds)


def redact_record(record: Any) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The changed fields of ``record`` with secrets redacted, and per field the kinds
    redacted there (empty when nothing was secret)."""
    def get(name: str) -> Any:
        return record.get(name) if isinstance(record, Mapping) else getattr(record, name, None)

    updates: dict[str, Any] = {}
    report: dict[str, list[str]] = {}
    for name in (*TEXT_FIELDS, "tags", "metadata"):
        value = get(name)
        if value is None:
            continue
        kinds: list[str] = []
        redacted = _redact_value(list(value) if isinstance(value, tuple) else value, 0, kinds)
        if kinds:
            updates[name] = redacted
            report[name] = kinds
    return updates, report
