"""What ``migrate-store`` reports: per table, how it moved, its rows and both hashes."""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["TableResult", "TransferReport"]


class TableResult(BaseModel):
    table: str
    how: str = Field(description="copied, registry (written by the target's vector index), "
                     "vectors, rebuilt (by the target's keyword index) or skipped")
    rows: int = Field(description="Rows in the source (for rebuilt: documents made).")
    target_rows: int | None = None
    source_hash: str | None = None
    target_hash: str | None = None
    ok: bool
    note: str = ""


class TransferReport(BaseModel):
    """The result of one copy; ``ok`` only if every table's count and hash agree."""

    source: str
    target: str
    schema_version: int
    ok: bool
    committed: bool = Field(description="False: the target's transaction was rolled back")
    tables: list[TableResult]
    audit_events: int
    audit_intact: bool = Field(description="The hash chain verifies on the target")
    audit_problem: str | None = None
    rows: int = Field(description="Rows written (copied tables and vectors, not documents)")
    seconds: float
    rows_per_second: float
    problem: str | None = Field(default=None, description="The first mismatch, if any")
