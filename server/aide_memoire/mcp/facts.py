"""The facts tools: what is known about a subject (now, then, or its history) and what is
related to an entity or a memory in the entity graph."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from ..engine.facts.models import Fact, RelatedResult
from .models import Namespace, ToolInput, When
from .spec import READ, ToolSpec

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory

__all__ = ["TOOLS"]


class FactsInput(ToolInput):
    subject: str = Field(
        min_length=1, max_length=200,
        description="A name ('Alice'), project, component ('numpy'), 'we' (the team) or "
        "'user'.",
    )
    predicate: str | None = Field(
        default=None, min_length=1, max_length=64,
        description="Only this, e.g. works_at, role, uses_version, prefers.",
    )
    as_of: When | None = Field(
        default=None, description="What held then; default now."
    )
    include_history: bool = Field(
        default=False, description="Superseded facts too."
    )
    limit: int = Field(default=100, ge=1, le=1000, description="Max facts.")
    namespace: Namespace = None


class FactsOutput(BaseModel):
    namespace: str
    subject: str
    facts: list[Fact] = Field(description="By predicate, oldest first; 'current' marks "
                              "those holding now (or at as_of).")


class RelatedInput(ToolInput):
    entity_or_id: str = Field(
        min_length=1, max_length=200,
        description="An entity name or a memory id (its entities).",
    )
    depth: int = Field(default=1, ge=1, le=3, description="How many edges to follow.")
    limit: int = Field(default=20, ge=1, le=200, description="Max entities.")
    namespace: Namespace = None


def facts(memory: Memory, args: FactsInput, namespace: str) -> FactsOutput:
    found = memory.facts(
        args.subject, namespace=namespace, predicate=args.predicate, as_of=args.as_of,
        include_history=args.include_history, limit=args.limit,
    )
    return FactsOutput(namespace=namespace, subject=args.subject, facts=found)


def related(memory: Memory, args: RelatedInput, namespace: str) -> RelatedResult:
    return memory.related(
        args.entity_or_id, namespace=namespace, depth=args.depth,
        limit=args.limit,
    )


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="memory_facts",
        title="Facts about a subject",
        description=(
            "The (subject, predicate, object) facts read from memories about one subject (where "
            "someone works, a version, a preference): what holds now, as_of a time, or with "
            "history."
        ),
        input=FactsInput,
        output=FactsOutput,
        handler=facts,
        hints=READ,
    ),
    ToolSpec(
        name="memory_related",
        title="Related entities",
        description=(
            "Walk the entity graph from a name or memory id: people, places, organisations and "
            "tools mentioned with it, up to depth edges away, with the memories naming them."
        ),
        input=RelatedInput,
        output=RelatedResult,
        handler=related,
        hints=READ,
    ),
)
