"""Trust: secrets refused, personal data recorded and masked, injection held for review,
a hash-chained audit log, and deletion that leaves no copy behind.

Only the screening functions and result models are exported here; ``Trust`` (the
write-path hooks) is imported from its module by the engine context, and the review,
audit and forget calls are ``services/trust.py``, keeping this package free of import
cycles with the store.

The names load on first use (PEP 562): the prompt hook's keyword path redacts with
``redact.py`` alone and must not pay for the screen's models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_names

if TYPE_CHECKING:
    from .findings import Finding
    from .injection import scan_injection
    from .models import AuditEvent, AuditReport, ForgetReport, ReviewDecision, ReviewItem
    from .pii import mask_pii, scan_pii
    from .screen import Screening, ScreenMode, refuse_secrets, screen_text
    from .secrets import scan_secrets

_WHERE = {
    "Finding": "findings",
    "scan_injection": "injection",
    **{name: "models" for name in ("AuditEvent", "AuditReport", "ForgetReport",
                                   "ReviewDecision", "ReviewItem")},
    "mask_pii": "pii",
    "scan_pii": "pii",
    **{name: "screen" for name in ("Screening", "ScreenMode", "refuse_secrets",
                                   "screen_text")},
    "scan_secrets": "secrets",
}

__all__ = [
    "AuditEvent",
    "AuditReport",
    "Finding",
    "ForgetReport",
    "ReviewDecision",
    "ReviewItem",
    "ScreenMode",
    "Screening",
    "mask_pii",
    "refuse_secrets",
    "scan_injection",
    "scan_pii",
    "scan_secrets",
    "screen_text",
]


__getattr__ = lazy_names(__name__, globals(), _WHERE)
