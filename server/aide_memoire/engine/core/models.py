"""Typed records the engine returns. Edges (CLI, MCP) return these same models."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .domain import IMPORTANCE_DEFAULT, MemoryKind, MemoryStatus

__all__ = [
    "Hit",
    "ImportReport",
    "MemoryRecord",
    "Status",
    "Stage",
    "MemoryKind",
    "MemoryStatus",
]



class MemoryRecord(BaseModel):
    """A stored memory, exactly as kept."""

    model_config = ConfigDict(frozen=True)

    id: str
    namespace: str
    kind: MemoryKind
    content: str
    tags: list[str] = Field(default_factory=list)
    importance: float = IMPORTANCE_DEFAULT
    source: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime
    observed_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    status: MemoryStatus = "active"
    access_count: int = 0
    last_accessed_at: datetime | None = None
    utility: float = 0.0
    session_id: str | None = None
    speaker: str | None = None
    role: str | None = None
    position: int | None = None
    reply_to: str | None = None
    context: str | None = None


class Hit(BaseModel):
    """One recalled memory, with why it came back."""

    model_config = ConfigDict(frozen=True)

    id: str
    namespace: str
    content: str
    kind: MemoryKind
    score: float = Field(description="Final score; higher is better, comparable within one call.")
    scores: dict[str, float] = Field(
        default_factory=dict, description="Each retriever's own score for this memory."
    )
    ranks: dict[str, int] = Field(
        default_factory=dict, description="Each retriever's 1-based rank for this memory."
    )
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    source: str | None = None
    observed_at: datetime | None = None
    created_at: datetime
    status: MemoryStatus = "active"
    superseded_by: str | None = Field(
        default=None, description="The memory that replaced this one, if any (newer first)."
    )
    session_id: str | None = None
    speaker: str | None = None
    position: int | None = None


class Stage(BaseModel):
    """One stage of the recall pipeline and whether it is live."""

    name: str
    live: bool
    detail: str


class Status(BaseModel):
    """What the store holds and which parts of the pipeline work on this machine."""

    version: str
    home: str
    db_path: str
    db_bytes: int
    schema_version: int
    sqlite_driver: str
    sqlite_version: str
    journal_mode: str
    encryption: str = Field(default="off", description="'off', or the cipher and where the "
                            "key came from (never the key).")
    memories: int
    namespaces: dict[str, int]
    stages: list[Stage]


class ImportReport(BaseModel):
    """What an import did."""

    read: int
    added: int
    skipped: int
    redacted: int = Field(default=0, description="Secrets replaced by [redacted:<kind>].")
    refused: list[str] = Field(
        default_factory=list,
        description="Lines left out for a secret, each named (line, field, kind, offset).",
    )
    dropped_links: list[str] = Field(
        default_factory=list,
        description="Links (reply_to, superseded_by) to memories neither stored nor in the "
        "file, dropped; one line each, naming the import line.")
