"""Secrets removed span by span, for writes whose policy is to keep the rest of the text.

An explicit store refuses a secret (the caller can fix the call); an automatic capture or
an import cannot ask anyone, so it keeps the text and replaces each secret by a marker
naming its kind. The findings say what was removed and where, never the value.
"""

from __future__ import annotations

from dataclasses import dataclass

from .secrets import scan_secrets

__all__ = ["Redaction", "RedactedSpan", "redact_secrets"]


@dataclass(frozen=True)
class RedactedSpan:
    """One secret removed: its kind and its span in the original text."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Redaction:
    """``text`` with each secret replaced by ``[redacted:<kind>]``."""

    text: str
    findings: tuple[RedactedSpan, ...]


def redact_secrets(text: str) -> Redaction:
    found = scan_secrets(text)  # sorted by start, no overlaps
    if not found:
        return Redaction(text, ())
    parts: list[str] = []
    at = 0
    for finding in found:
        parts.append(text[at : finding.start])
        parts.append(f"[redacted:{finding.rule}]")
        at = finding.end
    parts.append(text[at:])
    return Redaction("".join(parts), tuple(RedactedSpan(f.rule, f.start, f.end) for f in found))
