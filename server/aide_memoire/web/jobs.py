"""Whole-store checks (doctor, audit verify, a maintenance dry run) run off the request:
on a large store they take seconds, and no page may wait that long. A POST starts one
in a thread; the Health page shows it running (refreshing itself) and then its result."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..engine.core.errors import AideMemoireError

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory

__all__ = ["Job", "Jobs"]


@dataclass
class Job:
    name: str
    started: float
    finished: float | None = None
    html: str = ""  # the rendered result (escaped where it holds data)
    error: str = ""

    @property
    def running(self) -> bool:
        return self.finished is None

    @property
    def seconds(self) -> float:
        return (self.finished or time.monotonic()) - self.started


@dataclass
class Jobs:
    """The latest job of each name; one runs at a time per name."""

    latest: dict[str, Job] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, memory: Memory, actor: str, name: str,
              work: Callable[[], str]) -> bool:
        """Start ``work`` unless a job of that name runs; False if one does."""
        with self.lock:
            current = self.latest.get(name)
            if current is not None and current.running:
                return False
            job = Job(name=name, started=time.monotonic())
            self.latest[name] = job

        def run() -> None:
            try:
                with memory.acting_as(actor):
                    job.html = work()
            except AideMemoireError as exc:
                job.error = str(exc)
            finally:
                job.finished = time.monotonic()

        threading.Thread(target=run, name=f"web-{name}", daemon=True).start()
        return True

    def snapshot(self) -> list[Job]:
        with self.lock:
            return list(self.latest.values())
