"""The screen every write passes: secrets refused, personal data recorded, injection caught."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..core.errors import SecretRefused
from .fields import record_fields
from .findings import Finding
from .injection import scan_injection
from .pii import scan_pii
from .provenance import Provenance, for_person
from .secrets import scan_secrets

__all__ = ["ScreenMode", "Screening", "refuse_record_secrets", "refuse_secrets",
           "screen_record", "screen_text"]

ScreenMode = Literal["enforce", "observe"]

# Short field values repeat from write to write (a turn's speaker, session id and role,
# tags, metadata keys), and each was screened by every rule again. Those found clean are
# remembered (text only: a value with any finding is never kept, so no secret or personal
# datum stays in memory), which leaves the long, new text as the screen's real work.
_SHORT = 96
_CLEAN_MAX = 8192
_clean: dict[str, set[str]] = {"secrets": set(), "injection": set(), "pii": set()}
_SCANS: dict[str, Callable[..., list[Finding]]] = {
    "secrets": scan_secrets, "injection": scan_injection, "pii": scan_pii,
}


def _scan(kind: str, text: str, name: str) -> list[Finding]:
    short = len(text) <= _SHORT
    clean = _clean[kind]
    if short and text in clean:
        return []
    found = _SCANS[kind](text, field=name)
    if short and not found:
        if len(clean) >= _CLEAN_MAX:
            clean.clear()
        clean.add(text)
    return found


@dataclass
class Screening:
    """What the screen found in one memory's text, and whether it must be quarantined."""

    pii: list[Finding] = field(default_factory=list)
    injection: list[Finding] = field(default_factory=list)
    quarantine: bool = False
    provenance: Provenance = "program"

    @property
    def flags(self) -> list[Finding]:
        return [*self.pii, *self.injection]


def refuse_secrets(fields: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
    """Raise SecretRefused for the first secret in any field; the secret is never echoed."""
    pairs = fields.items() if isinstance(fields, Mapping) else fields
    for name, value in pairs:
        if not isinstance(value, str) or not value:
            continue
        found = _scan("secrets", value, name)
        if found:
            first = found[0]
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            raise SecretRefused(
                f"refused: {name} contains a secret ({first.label}) at character "
                f"{first.start}{more}; secrets are never stored. Remove it (keep a reference "
                "instead, such as the name of the environment variable that holds it) and try "
                "again",
                kind=first.rule,
                label=first.label,
                field=re.split(r"[.\[( ]", name, maxsplit=1)[0],
                offset=first.start,
            )


def _judged(injection: list[Finding], provenance: Provenance) -> list[Finding]:
    """A person's own rule is flagged (medium), not held; any other writer's is held."""
    return [Finding(f.category, f.rule, f.label, f.start, f.end, "medium", f.field)
            if f.confidence == "high" and for_person(f.rule, provenance) else f
            for f in injection]


def screen_text(text: str, *, mode: ScreenMode, extra: Finding | None = None,
                provenance: Provenance = "program") -> Screening:
    """Personal data and suspected injection in ``text`` (secrets are refused earlier)."""
    injection = _judged(scan_injection(text), provenance)
    if extra is not None:
        injection.append(extra)
    quarantine = mode == "enforce" and any(f.confidence == "high" for f in injection)
    return Screening(pii=scan_pii(text), injection=injection, quarantine=quarantine,
                     provenance=provenance)


def refuse_record_secrets(record: Any) -> None:
    """Refuse a secret in any stored or shown field of ``record`` (decoded metadata too)."""
    refuse_secrets(record_fields(record))


def screen_record(record: Any, *, mode: ScreenMode, extra: Finding | None = None,
                  provenance: Provenance = "program") -> Screening:
    """Personal data and suspected injection in every field of ``record``: an order in a
    tag, a speaker name or a metadata value holds the memory as one in its text does.
    ``provenance`` (trust/provenance.py) decides whether a rule given to the agent is the
    person's own or an attack."""
    pii: list[Finding] = []
    injection: list[Finding] = []
    for name, text in record_fields(record):
        injection.extend(_scan("injection", text, name))
        pii.extend(_scan("pii", text, name))
    injection = _judged(injection, provenance)
    if extra is not None:
        injection.append(extra)
    quarantine = mode == "enforce" and any(f.confidence == "high" for f in injection)
    return Screening(pii=pii, injection=injection, quarantine=quarantine,
                     provenance=provenance)
