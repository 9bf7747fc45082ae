"""Typed records the engine returns. Edges (CLI, MCP) return these same models.

``MemoryRecord``, ``Hit`` and the write path's ``NewRow`` are generated from the one
declaration of a memory's fields (``fields.py``) into ``record_models.py``.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from .domain import MemoryKind, MemoryStatus
from .record_models import FieldFilters, Hit, MemoryRecord, NewRow, StoreFields, UpdateFields

__all__ = [
    "FieldFilters",
    "Hit",
    "ImportReport",
    "MemoryRecord",
    "NewRow",
    "StoreFields",
    "UpdateFields",
    "Status",
    "Stage",
    "MemoryKind",
    "MemoryStatus",
]


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
    db_driver: str = Field(description="The Python driver of the store, with its version "
                           "for a server's ('sqlean', 'sqlcipher3', 'psycopg 3.2.3').")
    db_engine: str = Field(description="The database engine and its version ('SQLite "
                           "3.46.1', 'PostgreSQL 16.4').")
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
