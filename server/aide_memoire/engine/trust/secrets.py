"""Secret detection: fixed credential formats anywhere, other values by their context.

Provider formats and structured credentials (secret_formats.py) are refused wherever
they appear. Other values are refused only where their context makes them credentials
(secret_context.py: a credential-like name, a password flag on a command line, an auth
header, "my password is ..."), so that commit hashes, UUIDs, digests and object keys
pass. Both run on the text as written and on its normalised form (normalize.py), so
that an entity, a URL escape, a lookalike letter or a zero-width character inside a
token does not hide it; findings always carry offsets into the original text.
"""

from __future__ import annotations

import re

from .findings import Finding
from .gate import LiteralGate
from .normalize import Normalized, normalize, unescape_json_spaces
from .secret_context import context_findings
from .secret_formats import NEEDS, PROVIDER_RULES
from .secret_values import is_placeholder

__all__ = ["PROVIDER_RULES", "REDACTION_MARKER", "scan_secrets"]


_GATE = LiteralGate(PROVIDER_RULES, [rule for rule, _, _ in PROVIDER_RULES], NEEDS)


def _provider(text: str) -> list[Finding]:
    found: list[Finding] = []
    for rule, label, (pattern, bounded) in _GATE.rules(text.lower()):
        for match in pattern.finditer(text):
            start = match.start()
            if bounded and start and (text[start - 1].isalnum() or text[start - 1] == "_"):
                continue
            if "EXAMPLE" in match.group(0).upper() or is_placeholder(match.group(0)):
                continue
            found.append(Finding("secret", rule, label, *match.span()))
    return found


def _mapped(norm: Normalized, findings: list[Finding]) -> list[Finding]:
    out: list[Finding] = []
    for f in findings:
        start, end = norm.span(f.start, f.end)
        out.append(Finding(f.category, f.rule, f.label, start, end, f.confidence))
    return out


REDACTION_MARKER = re.compile(r"\[redacted:[a-z]{1,14}(?:-[a-z]{1,14}){0,4}\]")


def scan_secrets(text: str, *, field: str = "content") -> list[Finding]:
    """Every secret in ``text``, by original position. Where two overlap, a provider
    format wins over a context rule (it names the secret better), then the earlier one."""
    provider = _provider(text)
    generic = context_findings(text)
    norm = unescape_json_spaces(normalize(text))
    if norm.changed:
        provider += _mapped(norm, _provider(norm.text))
        generic += _mapped(norm, context_findings(norm.text))
    kept: list[Finding] = []
    # A marker left by redaction (trust/redact.py) is not a value, though it reads like one
    # after a password word. Rule names are lowercase words, so nothing with a digit or a
    # capital can hide inside one.
    kept.extend(Finding("secret", "redaction-marker", "redaction marker", *m.span())
                for m in REDACTION_MARKER.finditer(text))
    ordered = sorted(provider, key=lambda f: (f.start, -f.end))
    ordered += sorted(generic, key=lambda f: (f.start, -f.end))
    for finding in ordered:
        if not any(finding.start < k.end and k.start < finding.end for k in kept):
            kept.append(finding)
    return sorted(
        (Finding(f.category, f.rule, f.label, f.start, f.end, f.confidence, field) for f in kept
         if f.rule != "redaction-marker"),
        key=lambda f: f.start,
    )
