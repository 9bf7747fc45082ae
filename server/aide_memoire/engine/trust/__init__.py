"""Trust: secrets refused, personal data recorded and masked, injection held for review,
a hash-chained audit log, and deletion that leaves no copy behind.

Only the screening functions and result models are exported here; ``Trust`` (the
write-path hooks) is imported from its module by the engine context, and the review,
audit and forget calls are ``services/trust.py``, keeping this package free of import
cycles with the store.
"""

from .findings import Finding
from .injection import scan_injection
from .models import AuditEvent, AuditReport, ForgetReport, ReviewDecision, ReviewItem
from .pii import mask_pii, scan_pii
from .screen import Screening, ScreenMode, refuse_secrets, screen_text
from .secrets import scan_secrets

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
