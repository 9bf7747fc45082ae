"""Opt-in background maintenance: the safe band only, for namespaces left unmaintained.

Never stages proposals: a judgement call needs a person, and a person must ask for it
(``maintain --apply``). ``Memory.close`` stops the thread and waits for it.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import TYPE_CHECKING

from ...logs import get_logger
from ..core import clock
from ..core.errors import AideMemoireError

if TYPE_CHECKING:
    from ..runtime.context import EngineContext

__all__ = ["Background"]

log = get_logger(__name__)


class Background:
    def __init__(self, ctx: EngineContext, *, poll_s: float = 60.0) -> None:
        self.ctx = ctx
        self.poll_s = poll_s
        self.stop = threading.Event()
        self.runs = 0
        self._thread = threading.Thread(target=self._loop, name="aide-memoire-maintenance",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def close(self, timeout_s: float = 30.0) -> None:
        """Stop the loop and wait for a run in progress to end (it checks between
        namespaces), so that no maintenance writes after its store closed."""
        self.stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    def due(self) -> list[str]:
        """Namespaces whose last run is older than the configured interval (or never)."""
        cutoff = clock.format_time(
            clock.now() - timedelta(hours=self.ctx.settings.auto_maintenance_hours))
        conn = self.ctx.db.conn()
        return self.ctx.store.namespaces_unmaintained_since(conn, cutoff)

    def run_once(self) -> int:
        count = 0
        for namespace in self.due():
            if self.stop.is_set() or self.ctx.db.closed:
                break
            with self.ctx.trust.acting_as("auto-maintenance"):
                from .runner import maintain

                maintain(self.ctx, namespace, apply=True, auto_only=True, mode="auto")
            count += 1
        self.runs += 1
        return count

    def _loop(self) -> None:
        while not self.stop.is_set() and not self.ctx.db.closed:
            try:
                self.run_once()
            except AideMemoireError as exc:  # busy (another runner) or closed: try later
                log.info("auto_maintenance_skipped", error=str(exc))
            except Exception as exc:  # noqa: BLE001 - a background thread must not die loudly
                if self.ctx.db.closed:
                    return
                log.warning("auto_maintenance_failed", error=str(exc))
            self.stop.wait(self.poll_s)
