"""Typed results of the operations (snapshots, restore, doctor, reembed)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

__all__ = [
    "DoctorCheck", "DoctorReport", "EncryptionReport", "ReembedReport", "RestoreReport",
    "SnapshotInfo",
]


class SnapshotInfo(BaseModel):
    """One snapshot file in ``<home>/snapshots``."""

    name: str
    path: str
    bytes: int
    created_at: datetime


class RestoreReport(BaseModel):
    """What a restore did: where the live store was kept aside, what replaced it."""

    snapshot: str
    restored_to: str
    kept_aside: str | None = Field(
        default=None, description="The previous store, moved here (None if there was none)."
    )
    memories: int


class DoctorCheck(BaseModel):
    """One check: ``ok`` false means unhealthy; ``repaired`` if --repair fixed it."""

    name: str
    ok: bool
    detail: str
    repaired: bool = False


class DoctorReport(BaseModel):
    """Every check the doctor ran; ``healthy`` only if all pass (after any repair)."""

    healthy: bool
    checks: list[DoctorCheck]


class ReembedReport(BaseModel):
    """What a re-embedding pass did."""

    model: str | None
    space: str | None
    namespace: str | None
    encoded: int = Field(description="Vectors written in this pass.")
    remaining: int = Field(description="Rows still without a vector in the active space.")
    batches: int
    seconds: float
    detail: str = ""


class EncryptionReport(BaseModel):
    """What encrypt, decrypt or rekey did (the key's place is named, never the key)."""

    action: str
    path: str
    encrypted: bool = Field(description="Whether the store is encrypted now.")
    key_place: str | None = Field(
        default=None, description="Where the key is (decrypt: where it stays; delete it "
        "once no backup needs it).")
    snapshots: list[str] = Field(default_factory=list,
                                 description="Snapshots converted by this run.")
    note: str | None = None
