"""The lifecycle tools: outcome feedback, consolidation, the maintenance runner and its status.

Maintenance never decides a judgement call: it stages proposals that a person clears
through memory_review_queue / memory_review_decide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from ..engine.lifecycle.models import (
    ConsolidationReport,
    FeedbackResult,
    MaintenanceReport,
    MaintenanceStatus,
)
from .models import MemoryId, Namespace, ToolInput
from .spec import ACCUMULATE, READ, WRITE, ToolSpec

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory

__all__ = ["TOOLS"]


class FeedbackInput(ToolInput):
    id: MemoryId
    outcome: Literal["helpful", "unhelpful", "wrong"] = Field(
        description="unhelpful: of no use here; wrong: incorrect or outdated."
    )
    namespace: Namespace = None


class ConsolidateInput(ToolInput):
    dry_run: bool = Field(default=True, description="True (default): only show. False: "
                          "write, archive the sources.")
    limit: int = Field(default=20, ge=1, le=1000, description="Max summaries.")
    namespace: Namespace = None


class MaintenanceRunInput(ToolInput):
    apply: bool = Field(default=False, description="False (default): only report. True: do the "
                        "safe steps, stage the rest for review.")
    auto_only: bool = Field(default=False, description="Only the safe steps; stage no "
                            "proposals.")
    namespace: Namespace = None


class MaintenanceStatusInput(ToolInput):
    namespace: Namespace = None
    all_namespaces: bool = Field(default=False, description="Every namespace, not just one.")


def feedback(memory: Memory, args: FeedbackInput, namespace: str) -> FeedbackResult:
    return memory.feedback(args.id, args.outcome, namespace=namespace)


def consolidate(memory: Memory, args: ConsolidateInput, namespace: str) -> ConsolidationReport:
    return memory.consolidate(namespace, dry_run=args.dry_run, limit=args.limit)


def maintenance_run(
    memory: Memory, args: MaintenanceRunInput, namespace: str
) -> MaintenanceReport:
    return memory.maintain(namespace, apply=args.apply, auto_only=args.auto_only)


def maintenance_status(
    memory: Memory, args: MaintenanceStatusInput, namespace: str
) -> MaintenanceStatus:
    return memory.maintenance_status(None if args.all_namespaces else namespace)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="memory_feedback",
        title="Say whether a memory helped",
        description=(
            "Say whether a recalled memory was helpful, unhelpful or wrong: recall ranks it up or "
            "down from then on (the text stays). Use after acting on a memory or when the user "
            "corrects one."
        ),
        input=FeedbackInput,
        output=FeedbackResult,
        handler=feedback,
        hints=ACCUMULATE,
    ),
    ToolSpec(
        name="memory_consolidate",
        title="Consolidate related memories",
        description=(
            "Summarise groups of closely related memories extractively (dated, nothing invented). "
            "Dry run by default; dry_run=false (only if the user asked) writes them, archiving "
            "sources."
        ),
        input=ConsolidateInput,
        output=ConsolidationReport,
        handler=consolidate,
        hints=ACCUMULATE,
    ),
    ToolSpec(
        name="memory_maintenance_run",
        title="Run memory maintenance",
        description=(
            "Tidy a namespace; dry run by default. apply=true does only provably safe steps (exact "
            "duplicates, expired items) and stages judgement calls (merges, summaries, cold tier) "
            "for review."
        ),
        input=MaintenanceRunInput,
        output=MaintenanceReport,
        handler=maintenance_run,
        hints=WRITE,
    ),
    ToolSpec(
        name="memory_maintenance_status",
        title="Memory maintenance status",
        description=(
            "When maintenance last ran in each namespace, how many proposals wait for review, how "
            "many memories are in the cold tier, and which lifecycle parts are live."
        ),
        input=MaintenanceStatusInput,
        output=MaintenanceStatus,
        handler=maintenance_status,
        hints=READ,
    ),
)
