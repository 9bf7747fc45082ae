"""Secret redaction for automatic capture: remove each secret span, keep the rest of the text.

An explicit ``store`` refuses a text holding a secret (the caller can fix it). A captured
conversation turn has no caller to ask, and refusing it would lose the whole turn for one
token, so capture replaces each span the secrets scanner finds with ``[redacted:<kind>]``.
Findings keep kind and position in the original text, never the value.
"""

from __future__ import annotations

from dataclasses import dataclass

from .findings import Finding
from .secrets import scan_secrets

__all__ = ["Redaction", "redact_secrets"]

# A marker must not itself look like a password next to a password word ("password:
# [redacted:password]" would be found again), so it is checked and the scan repeated.
_MAX_PASSES = 4


@dataclass(frozen=True)
class Redaction:
    """``text`` with every secret span replaced; ``findings`` located in the original."""

    text: str
    findings: tuple[Finding, ...]


def _marker(finding: Finding) -> str:
    return f"[redacted:{finding.rule}]"


def _replace(text: str, findings: list[Finding]) -> str:
    out: list[str] = []
    at = 0
    for finding in sorted(findings, key=lambda f: f.start):
        out.append(text[at:finding.start])
        out.append(_marker(finding))
        at = finding.end
    out.append(text[at:])
    return "".join(out)


def redact_secrets(text: str) -> Redaction:
    """``text`` with each secret replaced by a marker naming its kind."""
    found = scan_secrets(text)
    if not found:
        return Redaction(text=text, findings=())
    redacted = _replace(text, found)
    for _ in range(_MAX_PASSES):
        again = scan_secrets(redacted)
        if not again:
            break
        # Rare: a marker read as a password, or a secret revealed by a removed one.
        redacted = _replace(redacted, again)
    else:
        redacted = "[redacted:unscannable]"  # never store what the scanner still flags
    return Redaction(text=redacted, findings=tuple(found))
