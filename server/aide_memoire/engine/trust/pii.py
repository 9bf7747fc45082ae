"""Personal data: detected and recorded (kinds and spans), stored as given, masked on export.

``mask_pii`` is the one masking function: export uses it, and so will any log that
must not carry personal data.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from .findings import Finding
from .pii_formats import scan_formats

__all__ = ["MASKS", "luhn_valid", "mask_pii", "mask_value", "scan_pii"]

# In precedence order: an earlier kind wins where two overlap.
MASKS = {
    "email": "[EMAIL]",
    "iban": "[IBAN]",
    "card": "[CARD]",
    "ssn": "[SSN]",
    "uk-nino": "[NATIONAL-ID]",
    "dob": "[DATE-OF-BIRTH]",
    "ip": "[IP]",
    "phone": "[PHONE]",
    "address": "[ADDRESS]",
}
_LABELS = {
    "email": "email address",
    "phone": "phone number",
    "card": "payment card number",
    "ssn": "US social security number",
    "uk-nino": "UK national insurance number",
    "ip": "IP address",
    "iban": "bank account number (IBAN)",
    "dob": "date of birth",
    "address": "street address",
}

_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
    r"[A-Za-z]{2,24}\b"
)
# International (+CC ...) or North American (NNN) NNN-NNNN shapes; digits counted below.
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[\s.\-]?(?:\(\d{1,4}\)[\s.\-]?)?\d{1,4}(?:[\s.\-]?\d{2,4}){1,4}"
    r"|\(\d{3}\)\s?\d{3}[\s.\-]\d{4}|\d{3}[\s.\-]\d{3}[\s.\-]\d{4})(?![\w-])"
)
_CARD = re.compile(r"(?<![\d-])\d[\d -]{11,24}\d(?![\d-])")
_SSN = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")
_NINO = re.compile(r"\b(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
                   r" ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b")
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]|\.\d)")
# A loose candidate; ipaddress decides (so times like 10:30:45 are not addresses).
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:/\d{1,3})?(?![\w:])")


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def _card_ok(raw: str) -> bool:
    digits = re.sub(r"\D", "", raw)
    return 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn_valid(digits)


def _phone_ok(raw: str) -> bool:
    digits = re.sub(r"\D", "", raw)
    return 10 <= len(digits) <= 15 and len(set(digits)) > 2


def _ip_ok(raw: str, text: str, start: int) -> bool:
    if re.search(r"(?i)(?:\bv|version\s*|release\s*)$", text[max(0, start - 9) : start]):
        return False
    address = raw.split("/")[0]
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    if parsed.version == 6:
        return address.count(":") >= 2 and any(c.isdigit() for c in address)
    return not parsed.is_unspecified


def scan_pii(text: str, *, field: str = "content") -> list[Finding]:
    """Personal data in ``text`` as findings (kind and span), non-overlapping, by position."""
    found: list[Finding] = []

    def add(kind: str, start: int, end: int) -> None:
        found.append(Finding("pii", kind, _LABELS[kind], start, end, "high", field))

    for match in _EMAIL.finditer(text):
        add("email", *match.span())
    for match in _SSN.finditer(text):
        add("ssn", *match.span())
    for match in _NINO.finditer(text):
        add("uk-nino", *match.span())
    for match in _CARD.finditer(text):
        if _card_ok(match.group(0)):
            add("card", *match.span())
    for match in _IPV4.finditer(text):
        if _ip_ok(match.group(0), text, match.start()):
            add("ip", *match.span())
    for match in _IPV6.finditer(text):
        if _ip_ok(match.group(0), text, match.start()):
            add("ip", *match.span())
    for match in _PHONE.finditer(text):
        if _phone_ok(match.group(0)):
            add("phone", *match.span())
    for kind, start, end in scan_formats(text):
        add(kind, start, end)
    order = {kind: rank for rank, kind in enumerate(MASKS)}
    found.sort(key=lambda f: (f.start, order[f.rule]))
    kept: list[Finding] = []
    for finding in found:
        if kept and finding.start < kept[-1].end:
            continue
        kept.append(finding)
    return kept


def mask_pii(text: str) -> str:
    """``text`` with each piece of personal data replaced by its kind, e.g. ``[EMAIL]``."""
    findings = scan_pii(text)
    if not findings:
        return text
    parts: list[str] = []
    cursor = 0
    for finding in findings:
        parts.append(text[cursor : finding.start])
        parts.append(MASKS[finding.rule])
        cursor = finding.end
    parts.append(text[cursor:])
    return "".join(parts)


def mask_value(value: Any, depth: int = 0) -> Any:
    """``value`` (decoded JSON) with personal data masked in every string, recursively."""
    if depth > 32:
        return value
    if isinstance(value, str):
        return mask_pii(value)
    if isinstance(value, dict):
        return {key: mask_value(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [mask_value(item, depth + 1) for item in value]
    return value
