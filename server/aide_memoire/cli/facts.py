"""``aide-memoire facts SUBJECT`` and ``aide-memoire related ENTITY_OR_ID``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from ..engine.facts.models import Fact, RelatedResult
from .namespace import namespace_option
from .output import emit

__all__ = ["format_facts", "register"]


def format_facts(facts: Sequence[Fact]) -> str:
    """One line a fact: subject predicate object, since when, until when, from which memory."""
    lines = []
    for fact in facts:
        until = f" until {fact.valid_to:%Y-%m-%d}" if fact.valid_to else ""
        by = f" (replaced by {fact.superseded_by})" if fact.superseded_by else ""
        mark = "*" if fact.current else " "
        lines.append(
            f"{mark} {fact.subject_text} {fact.predicate} {fact.object_text}  "
            f"from {fact.valid_from:%Y-%m-%d}{until}{by}  [memory {fact.memory_id}]"
        )
    return "\n".join(lines) or "no facts"


def _related_text(result: RelatedResult) -> str:
    lines = [f"from {', '.join(result.start)} in {result.namespace}"]
    lines += [
        f"  {e.display:<30} {e.type:<12} hops {e.hops}  weight {e.weight:.3f}  "
        f"mentions {e.mentions}"
        for e in result.entities
    ]
    lines += [f"  memory {m.id}: {m.content[:120]!r}" for m in result.memories]
    return "\n".join(lines) if result.entities else lines[0] + "\n  nothing related"


def register(cli: click.Group, open_memory: Callable[[click.Context], Any]) -> None:
    """Add ``facts`` and ``related`` to the ``aide-memoire`` group."""

    @cli.command()
    @click.argument("subject")
    @namespace_option
    @click.option("--predicate", "-p", default=None,
                  help="Only this predicate (works_at, lives_in, role, uses_version, ...).")
    @click.option("--as-of", default=None, help="The facts that held then (ISO 8601).")
    @click.option("--history", is_flag=True, help="Every value ever recorded, replaced ones too.")
    @click.option("--limit", type=int, default=100, show_default=True, help="How many facts.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def facts(
        ctx: click.Context, subject: str, namespace: str, predicate: str | None,
        as_of: str | None, history: bool, limit: int, as_json: bool,
    ) -> None:
        """Facts about SUBJECT read from the memories ('*' marks those holding now)."""
        with open_memory(ctx) as memory:
            found = memory.facts(subject, namespace=namespace, predicate=predicate,
                                 as_of=as_of, include_history=history, limit=limit)
        emit({"subject": subject, "facts": found}, as_json=as_json, text=format_facts(found))

    @cli.command()
    @click.argument("entity_or_id")
    @namespace_option
    @click.option("--depth", type=int, default=1, show_default=True,
                  help="How many edges to follow (1 to 3).")
    @click.option("--limit", type=int, default=20, show_default=True, help="How many entities.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def related(
        ctx: click.Context, entity_or_id: str, namespace: str, depth: int, limit: int,
        as_json: bool,
    ) -> None:
        """Entities related to ENTITY_OR_ID (a name or a memory id) in the entity graph."""
        with open_memory(ctx) as memory:
            result = memory.related(entity_or_id, namespace=namespace, depth=depth, limit=limit)
        emit(result, as_json=as_json, text=_related_text(result))
