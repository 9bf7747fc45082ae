"""``AsyncMemory``: the same engine for asyncio programs, each call in a worker thread."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ParamSpec, TypeVar

import anyio
import anyio.to_thread

from .facts.models import Fact, RelatedResult
from .memory import Memory
from .models import Hit, ImportReport, MemoryRecord, Status
from .pipeline import SecretsPolicy
from .settings import Settings

__all__ = ["AsyncMemory"]

P = ParamSpec("P")
R = TypeVar("R")


class AsyncMemory:
    """Async twin of :class:`Memory`; use ``async with``."""

    def __init__(
        self,
        home: str | os.PathLike[str] | None = None,
        *,
        settings: Settings | None = None,
        max_threads: int = 4,
    ) -> None:
        self._home = home
        self._settings = settings
        self._memory: Memory | None = None
        self._limiter = anyio.CapacityLimiter(max_threads)

    async def __aenter__(self) -> AsyncMemory:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def open(self) -> None:
        if self._memory is None:
            self._memory = await anyio.to_thread.run_sync(
                functools.partial(Memory, self._home, settings=self._settings),
                limiter=self._limiter,
            )

    async def aclose(self) -> None:
        if self._memory is not None:
            await anyio.to_thread.run_sync(self._memory.close, limiter=self._limiter)
            self._memory = None

    @property
    def sync(self) -> Memory:
        if self._memory is None:
            raise RuntimeError("AsyncMemory is not open: use 'async with AsyncMemory() as m'")
        return self._memory

    async def _run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        return await anyio.to_thread.run_sync(
            functools.partial(fn, *args, **kwargs), limiter=self._limiter
        )

    async def store(self, content: str, **kwargs: Any) -> str:
        return await self._run(self.sync.store, content, **kwargs)

    async def get(self, memory_id: str, *, namespace: str) -> MemoryRecord:
        return await self._run(self.sync.get, memory_id, namespace=namespace)

    async def update(self, memory_id: str, **kwargs: Any) -> MemoryRecord:
        return await self._run(self.sync.update, memory_id, **kwargs)

    async def forget(self, memory_id: str, *, namespace: str) -> bool:
        return await self._run(self.sync.forget, memory_id, namespace=namespace)

    async def search(self, **kwargs: Any) -> list[MemoryRecord]:
        return await self._run(self.sync.search, **kwargs)

    async def recall(self, query: str, **kwargs: Any) -> list[Hit]:
        return await self._run(self.sync.recall, query, **kwargs)

    async def facts(self, subject: str, **kwargs: Any) -> list[Fact]:
        return await self._run(self.sync.facts, subject, **kwargs)

    async def related(self, entity_or_id: str, **kwargs: Any) -> RelatedResult:
        return await self._run(self.sync.related, entity_or_id, **kwargs)

    async def status(self) -> Status:
        return await self._run(self.sync.status)

    async def export_lines(self, namespace: str | None = None) -> list[str]:
        return await self._run(lambda: list(self.sync.export_lines(namespace)))

    async def import_(
        self, lines: Iterable[str] | Sequence[str], *, secrets: SecretsPolicy = "refuse"
    ) -> ImportReport:
        return await self._run(self.sync.import_, lines, secrets=secrets)
