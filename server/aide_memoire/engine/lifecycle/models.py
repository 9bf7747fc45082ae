"""Typed results of the lifecycle layer; the CLI and MCP return these same models."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = [
    "Action",
    "ConsolidationReport",
    "FeedbackResult",
    "MaintenanceReport",
    "MaintenanceStatus",
    "NamespaceMaintenance",
    "Outcome",
    "RestoreResult",
    "SummaryPlan",
]

Outcome = Literal["helpful", "unhelpful", "wrong"]
ActionKind = Literal[
    "retire_duplicate", "expire", "expire_proposals", "merge", "consolidate", "demote"
]


class Action(BaseModel):
    """One step of a maintenance run: done (safe band) or staged as a proposal."""

    kind: ActionKind
    memory_ids: list[str] = Field(description="The memories it touches (the one kept first).")
    evidence: dict[str, Any] = Field(default_factory=dict, description="Why, with figures.")
    state: Literal["planned", "done", "proposed", "skipped"] = Field(
        description="'planned' on a dry run; 'done' for safe steps applied; 'proposed' when "
        "staged in the review queue; 'skipped' when a pending proposal already covers it."
    )
    proposal_id: str | None = None


class MaintenanceReport(BaseModel):
    """What a maintenance run did (or, dry, would do) in one namespace."""

    namespace: str
    dry_run: bool
    auto_only: bool
    run_id: str | None = Field(default=None, description="None on a dry run (nothing written).")
    started_at: datetime
    finished_at: datetime | None = None
    actions: list[Action] = Field(default_factory=list)
    done: int = 0
    proposed: int = 0
    notes: list[str] = Field(default_factory=list, description="Stages off, and why.")


class NamespaceMaintenance(BaseModel):
    namespace: str
    last_run_at: datetime | None = None
    last_run_mode: str | None = None
    last_run_status: str | None = None
    pending_proposals: int = 0
    archived: int = 0
    lease_holder: str | None = Field(default=None, description="A runner working it now.")


class MaintenanceStatus(BaseModel):
    """When maintenance last ran per namespace, and which lifecycle parts are live."""

    namespaces: list[NamespaceMaintenance]
    scoring: bool
    near_duplicates: str = Field(description="Policy and threshold, or why it is off.")
    consolidation: str
    auto_maintenance: str


class FeedbackResult(BaseModel):
    """A memory's running feedback estimate after one more outcome."""

    id: str
    namespace: str
    outcome: Outcome
    helpful: int
    unhelpful: int
    wrong: int
    estimate: float = Field(description="-1 (wrong) .. +1 (helpful); 0 without feedback.")


class SummaryPlan(BaseModel):
    """One cluster and the extractive summary that would stand for it."""

    source_ids: list[str]
    text: str
    similarity: float = Field(description="Mean pairwise similarity inside the cluster.")
    tags: list[str] = Field(default_factory=list)
    summary_id: str | None = Field(default=None, description="Set once written.")


class ConsolidationReport(BaseModel):
    namespace: str
    dry_run: bool
    summaries: list[SummaryPlan] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class RestoreResult(BaseModel):
    id: str
    namespace: str
    restored: bool
    status: str
