"""Access statistics, written in batches: a recall never pays for a write of its own.

Recall notes which memories it returned; the counts are added to ``access_count`` and
``last_accessed_at`` in one short transaction when enough have gathered, when enough
time has passed, or when the store closes. A crash loses at most that window of
statistics, never a memory.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterable

from ..core import clock
from .protocol import Database
from .repositories import MemoryRows

__all__ = ["AccessLog"]

class AccessLog:
    def __init__(
        self, rows: MemoryRows, *, max_pending: int = 512, max_age_s: float = 5.0
    ) -> None:
        self.rows = rows  # written through in the flush's transaction
        self.max_pending = max_pending
        self.max_age_s = max_age_s
        self._pending: Counter[str] = Counter()
        self._last: dict[str, str] = {}
        self._since = time.monotonic()
        self._lock = threading.Lock()

    def note(self, memory_ids: Iterable[str]) -> None:
        stamp = clock.format_time(clock.now())
        with self._lock:
            for memory_id in memory_ids:
                self._pending[memory_id] += 1
                self._last[memory_id] = stamp

    def due(self) -> bool:
        with self._lock:
            return bool(self._pending) and (
                len(self._pending) >= self.max_pending
                or time.monotonic() - self._since >= self.max_age_s
            )

    def flush(self, db: Database) -> int:
        """Write what has gathered; returns how many memories were touched."""
        with self._lock:
            pending, last = self._pending, self._last
            self._pending, self._last = Counter(), {}
            self._since = time.monotonic()
        if not pending:
            return 0
        with db.write() as tx:
            self.rows.record_access(
                tx, [(count, last[memory_id], memory_id) for memory_id, count in pending.items()]
            )
        return len(pending)
