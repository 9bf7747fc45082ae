"""aide-memoire: persistent, local-first memory for AI agents.

The public names load on first use (PEP 562), so that a short process importing one
light module of the package (the prompt hook: cli/hook.py) does not pay for the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._version import __version__
from .engine.core.lazy import lazy_names

if TYPE_CHECKING:
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

_WHERE = {
    "AsyncMemory": "engine.facade.async_memory",
    "Memory": "engine.facade.memory",
    "Settings": "engine.core.settings",
    **{name: "engine.core.models" for name in ("Hit", "ImportReport", "MemoryRecord", "Stage",
                                          "Status")},
    **{name: "engine.core.errors" for name in (
        "AideMemoireError", "ForeignDatabase", "InvalidContent", "InvalidInput",
        "InvalidNamespace", "InvalidQuery", "ModelUnavailable", "NewerSchema", "NotFound",
        "PartMissing", "SecretRefused", "StoreError", "StoreFull")},
}

__all__ = [
    "AideMemoireError",
    "AsyncMemory",
    "ForeignDatabase",
    "Hit",
    "ImportReport",
    "InvalidContent",
    "InvalidInput",
    "InvalidNamespace",
    "InvalidQuery",
    "Memory",
    "MemoryRecord",
    "ModelUnavailable",
    "NewerSchema",
    "NotFound",
    "PartMissing",
    "SecretRefused",
    "Settings",
    "Stage",
    "Status",
    "StoreError",
    "StoreFull",
    "__version__",
]


__getattr__ = lazy_names(__name__, globals(), _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
