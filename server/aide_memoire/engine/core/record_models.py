"""A memory's models, generated from ``fields.FIELDS`` by ``fields_codegen.py``.

Do not edit: change ``fields.py`` and run ``python -m
aide_memoire.engine.core.fields_codegen > server/aide_memoire/engine/core/record_models.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from .domain import IMPORTANCE_DEFAULT, MemoryKind, MemoryStatus

__all__ = ["FieldFilters", "Hit", "MemoryRecord", "NewRow", "StoreFields", "UpdateFields"]

# Kept by name for the generated annotations (ruff would drop an unused import).
_TYPES = (Iterable, Mapping, datetime, MemoryKind, MemoryStatus)


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
    score: float = Field(
        description="Final score; higher is better, comparable within one call."
    )
    scores: dict[str, float] = Field(
        default_factory=dict, description="Each retriever's own score for this memory."
    )
    ranks: dict[str, int] = Field(
        default_factory=dict, description="Each retriever's 1-based rank for this memory."
    )
    tags: list[str] = Field(default_factory=list)
    source: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    observed_at: datetime | None = None
    superseded_by: str | None = Field(
        default=None, description="The memory that replaced this one, if any (newer first)."
    )
    status: MemoryStatus = "active"
    session_id: str | None = None
    speaker: str | None = None
    position: int | None = None

    @classmethod
    def of(
        cls, record: MemoryRecord, score: float, scores: dict[str, float],
        ranks: dict[str, int],
    ) -> Hit:
        """The hit for a recalled record: its recalled fields and the scores."""
        return cls(
            score=score, scores=scores, ranks=ranks,
            id=record.id,
            namespace=record.namespace,
            kind=record.kind,
            content=record.content,
            tags=record.tags,
            source=record.source,
            metadata=record.metadata,
            created_at=record.created_at,
            observed_at=record.observed_at,
            superseded_by=record.superseded_by,
            status=record.status,
            session_id=record.session_id,
            speaker=record.speaker,
            position=record.position,
        )


@dataclass(kw_only=True)
class NewRow:
    """What the write path hands the store for one new memory."""

    namespace: str
    content: str
    kind: str = "note"
    tags: list[str] = field(default_factory=list)
    importance: float = IMPORTANCE_DEFAULT
    source: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    observed_at: datetime | None = None
    status: str = "active"
    session_id: str | None = None
    speaker: str | None = None
    role: str | None = None
    position: int | None = None
    reply_to: str | None = None
    context: str | None = None
    id: str | None = None


class StoreFields(TypedDict, total=False):
    """What ``store`` takes besides its text and namespace, by name."""

    kind: str
    tags: Iterable[str] | str
    importance: float
    source: str | None
    metadata: Mapping[str, Any] | None
    observed_at: datetime | str | None


class UpdateFields(TypedDict, total=False):
    """What ``update`` may change (None leaves a field as it is)."""

    content: str | None
    kind: str | None
    tags: Iterable[str] | str | None
    importance: float | None
    source: str | None
    metadata: Mapping[str, Any] | None
    observed_at: datetime | str | None


class FieldFilters(TypedDict, total=False):
    """Exact-match filters of recall and search (fields declared "equals")."""

    pass
