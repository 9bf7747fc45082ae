"""aide-memoire: persistent, local-first memory for AI agents."""

from ._version import __version__
from .engine.async_memory import AsyncMemory
from .engine.errors import (
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
from .engine.memory import Memory
from .engine.models import Hit, ImportReport, MemoryRecord, Stage, Status
from .engine.settings import Settings

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
