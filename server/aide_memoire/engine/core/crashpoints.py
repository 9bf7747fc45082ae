"""Named points where a test can have the real process killed, to prove crash safety.

``AIDE_MEMOIRE_CRASH_AT=forget.merged`` makes the process SIGKILL itself when it
reaches that point (the list is in docs/trust.md, "Forget"); unset, a point costs one
dictionary lookup. It exists so that crash tests run the shipped code path in a real
process rather than a copy of it with a fault injected.
"""

from __future__ import annotations

import os
import signal

__all__ = ["CRASH_ENV", "crash_point"]

CRASH_ENV = "AIDE_MEMOIRE_CRASH_AT"


def crash_point(name: str) -> None:
    """Kill this process with SIGKILL if ``AIDE_MEMOIRE_CRASH_AT`` names ``name``."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))
