"""Namespaces a person can pin: a server setting that limits every call of a session to
listed namespaces, and the marking of reads that cross out of the session's own.

Today's rule stays the default: a namespace selects scope, not permission, so a session
may name any namespace of its user's store. A pin (``serve --allow-namespaces`` or
``AIDE_MEMOIRE_ALLOW_NAMESPACES``, comma-separated, ``*`` and ``?`` as wildcards) makes
it a permission: a call naming another namespace is refused before it reaches the
engine, and what a call returns from several namespaces at once (``all_namespaces``
queues, the audit history of a memory, the namespace counts of ``memory_status``) is
cut down to the pinned ones. The filter reads the result, not each tool's arguments,
so a tool added later is covered by the shape of what it returns.

Every read whose result holds another namespace than the session's default is marked:
in the result (``_meta``, and a line of its text) and in the audit log
(``read.cross_namespace``), pinned or not.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..engine.core.errors import InvalidNamespace

__all__ = ["ALLOW_ENV", "NamespacePin", "namespaces_in", "parse_pin"]

ALLOW_ENV = "AIDE_MEMOIRE_ALLOW_NAMESPACES"
_PATTERN = re.compile(r"[A-Za-z0-9*?][A-Za-z0-9_.:*?\-]{0,127}")


@dataclass(frozen=True)
class NamespacePin:
    """The namespaces a session may use, as glob patterns."""

    patterns: tuple[str, ...]

    def allows(self, namespace: str) -> bool:
        return any(fnmatch.fnmatchcase(namespace, p) for p in self.patterns)

    def check(self, namespace: str, *, tool: str) -> None:
        """Refuse a call naming a namespace outside the pin, saying which are allowed."""
        if not self.allows(namespace):
            raise InvalidNamespace(
                f"{tool}: namespace {namespace!r} is outside what this server is pinned to "
                f"({', '.join(self.patterns)}); use one of those, or ask whoever runs the "
                f"server to widen {ALLOW_ENV} / --allow-namespaces")

    def restrict(self, out: BaseModel) -> BaseModel:
        """``out`` without what belongs to namespaces outside the pin."""
        update: dict[str, Any] = {}
        for name in type(out).model_fields:
            value = getattr(out, name)
            if isinstance(value, list) and value and all(_ns(v) is not None for v in value):
                kept = [v for v in value if self.allows(str(_ns(v)))]
                if len(kept) != len(value):
                    update[name] = kept
            elif name == "namespaces" and isinstance(value, dict):
                update[name] = {k: v for k, v in value.items() if self.allows(str(k))}
        return out.model_copy(update=update) if update else out


def _ns(value: object) -> str | None:
    found = getattr(value, "namespace", None)
    return found if isinstance(found, str) else None


def namespaces_in(out: BaseModel) -> set[str]:
    """Every namespace whose data a result carries (its own field, its items', the keys
    of a per-namespace count)."""
    found: set[str] = set()
    for name in type(out).model_fields:
        if name == "default_namespace":
            continue
        value = getattr(out, name)
        if name == "namespace" and isinstance(value, str):
            found.add(value)
        elif isinstance(value, list):
            found |= {ns for ns in (_ns(v) for v in value) if ns is not None}
        elif name == "namespaces" and isinstance(value, dict):
            found |= {str(k) for k in value}
        elif isinstance(value, BaseModel) and _ns(value) is not None:
            found.add(str(_ns(value)))
    return found


def parse_pin(text: str | Iterable[str] | None) -> NamespacePin | None:
    """The pin a setting names; None for an empty setting (today's rule)."""
    if text is None:
        return None
    items = text.split(",") if isinstance(text, str) else list(text)
    patterns = tuple(p.strip() for p in items if p.strip())
    if not patterns:
        return None
    for pattern in patterns:
        if not _PATTERN.fullmatch(pattern):
            raise InvalidNamespace(
                f"{pattern!r} is not a namespace pattern: use namespace characters (letters, "
                "digits, _ . : -) with * or ? as wildcards, e.g. project:my-app or user:*")
    return NamespacePin(patterns)
