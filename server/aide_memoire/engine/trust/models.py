"""Typed results of the trust layer; the CLI and MCP return these same models."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AuditEvent",
    "AuditReport",
    "ForgetReport",
    "ReviewDecision",
    "ReviewItem",
]

ReviewStatus = Literal["pending", "approved", "rejected", "expired"]
DecisionName = Literal["approve", "reject", "edit"]


class ReviewItem(BaseModel):
    """One item waiting for (or past) a person's decision, with its evidence."""

    model_config = ConfigDict(frozen=True)

    id: str
    namespace: str
    kind: str = Field(description="'quarantine' for a held write; maintenance adds proposals.")
    memory_id: str | None = None
    content: str | None = Field(
        default=None, description="The held memory's text, quoted data (None once deleted)."
    )
    evidence: dict[str, Any] = Field(
        default_factory=dict, description="Why: rules and character spans, never the text."
    )
    status: ReviewStatus = "pending"
    created_at: datetime
    expires_at: datetime | None = None
    decided_at: datetime | None = None
    decided_by: str | None = None
    note: str | None = None


class ReviewDecision(BaseModel):
    """What a decision did; ``applied`` is False when the item was already decided."""

    item_id: str
    decision: DecisionName
    applied: bool
    status: ReviewStatus
    memory_id: str | None = None
    decided_by: str | None = None
    decided_at: datetime | None = None
    message: str


class AuditEvent(BaseModel):
    """One link of the hash chain. Carries a content hash, never content."""

    model_config = ConfigDict(frozen=True)

    seq: int
    at: datetime
    actor: str
    action: str
    namespace: str | None = None
    memory_id: str | None = None
    content_hash: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)
    prev_hash: str
    hash: str


class AuditReport(BaseModel):
    """Result of checking the whole chain; ``intact`` only if every link holds."""

    intact: bool
    events: int
    head_seq: int | None = None
    head_hash: str | None = None
    first_bad_seq: int | None = Field(
        default=None, description="The first event that fails (edited, removed or moved)."
    )
    problem: str | None = None

    def verdict(self) -> str:
        """One plain line: 'intact', or what broke and where (never a bare None)."""
        if self.intact:
            return "intact"
        where = f" at event {self.first_bad_seq}" if self.first_bad_seq is not None else ""
        return f"BROKEN{where}: {self.problem or 'no detail'}"


class ForgetReport(BaseModel):
    """Memories forgotten (or, on a dry run, that would be)."""

    dry_run: bool
    namespace: str
    ids: list[str] = Field(default_factory=list)
    forgotten: int = 0
    derived: list[str] = Field(
        default_factory=list,
        description="Summaries forgotten with them because they quoted a forgotten memory.",
    )
    purged: bool = Field(
        default=True,
        description="False when a reader kept the old bytes in the file for now: the purge "
        "is recorded and finished after the next write, open or close.",
    )
