"""aide-memoire: persistent, local-first memory for AI agents.

The public names are ``Memory``, ``AsyncMemory``, ``Settings``, and the models and errors
their public methods return (tests/test_contracts.py pins them). They load on first use
(PEP 562), so that a short process importing one light module of the package (the
prompt hook: cli/hook.py) does not pay for the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._version import __version__
from .engine.core.lazy import lazy_names

if TYPE_CHECKING:
    from .engine.code.models import CodeHit, CodeIndexReport, DocLink, SymbolHit
    from .engine.core.errors import (
        AideMemoireError,
        ForeignDatabase,
        InvalidContent,
        InvalidInput,
        InvalidNamespace,
        InvalidQuery,
        ModelUnavailable,
        NewerSchema,
        NotFound,
        PartMissing,
        SecretRefused,
        StoreError,
        StoreFull,
    )
    from .engine.core.models import Hit, ImportReport, MemoryRecord, Stage, Status
    from .engine.core.settings import Settings
    from .engine.facade.async_memory import AsyncMemory
    from .engine.facade.memory import Memory
    from .engine.facts.models import Fact, MemoryDetail, RelatedResult
    from .engine.lifecycle.models import (
        ConsolidationReport,
        FeedbackResult,
        MaintenanceReport,
        MaintenanceStatus,
        RestoreResult,
    )
    from .engine.ops.models import DoctorReport, ReembedReport, RestoreReport, SnapshotInfo
    from .engine.runtime.pipeline import WriteResult
    from .engine.trust.models import (
        AuditEvent,
        AuditReport,
        ForgetReport,
        ReviewDecision,
        ReviewItem,
    )
    from .engine.wiki.models import WikiExportReport, WikiLintReport

_WHERE = {
    "AsyncMemory": "engine.facade.async_memory",
    "Memory": "engine.facade.memory",
    "Settings": "engine.core.settings",
    **{name: "engine.core.models" for name in ("Hit", "ImportReport", "MemoryRecord", "Stage",
                                          "Status")},
    **dict.fromkeys(("AuditEvent", "AuditReport", "ForgetReport", "ReviewDecision",
                     "ReviewItem"), "engine.trust.models"),
    **dict.fromkeys(("CodeHit", "CodeIndexReport", "DocLink", "SymbolHit"),
                    "engine.code.models"),
    **dict.fromkeys(("ConsolidationReport", "FeedbackResult", "MaintenanceReport",
                     "MaintenanceStatus", "RestoreResult"), "engine.lifecycle.models"),
    **dict.fromkeys(("DoctorReport", "ReembedReport", "RestoreReport", "SnapshotInfo"),
                    "engine.ops.models"),
    **dict.fromkeys(("Fact", "MemoryDetail", "RelatedResult"), "engine.facts.models"),
    **dict.fromkeys(("WikiExportReport", "WikiLintReport"), "engine.wiki.models"),
    "WriteResult": "engine.runtime.pipeline",
    **{name: "engine.core.errors" for name in (
        "AideMemoireError", "ForeignDatabase", "InvalidContent", "InvalidInput",
        "InvalidNamespace", "InvalidQuery", "ModelUnavailable", "NewerSchema", "NotFound",
        "PartMissing", "SecretRefused", "StoreError", "StoreFull")},
}

__all__ = [
    "AideMemoireError",
    "AsyncMemory",
    "AuditEvent",
    "AuditReport",
    "CodeHit",
    "CodeIndexReport",
    "ConsolidationReport",
    "DocLink",
    "DoctorReport",
    "Fact",
    "FeedbackResult",
    "ForeignDatabase",
    "ForgetReport",
    "Hit",
    "ImportReport",
    "InvalidContent",
    "InvalidInput",
    "InvalidNamespace",
    "InvalidQuery",
    "MaintenanceReport",
    "MaintenanceStatus",
    "Memory",
    "MemoryDetail",
    "MemoryRecord",
    "ModelUnavailable",
    "NewerSchema",
    "NotFound",
    "PartMissing",
    "ReembedReport",
    "RelatedResult",
    "RestoreReport",
    "RestoreResult",
    "ReviewDecision",
    "ReviewItem",
    "SecretRefused",
    "Settings",
    "SnapshotInfo",
    "Stage",
    "Status",
    "StoreError",
    "StoreFull",
    "SymbolHit",
    "WikiExportReport",
    "WikiLintReport",
    "WriteResult",
    "__version__",
]


__getattr__ = lazy_names(__name__, globals(), _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
