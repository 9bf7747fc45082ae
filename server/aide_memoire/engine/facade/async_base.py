"""The hand-written part of ``AsyncMemory`` (``async_memory.py`` is generated over it).

Written once here rather than in the generator's template, so that the generated module
holds only the twins ``async_codegen.py`` derives from ``Memory``.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, Self, TypeVar

import anyio
import anyio.to_thread

from ..core.settings import Settings
from .memory import Memory

if TYPE_CHECKING:
    from ..ops.models import RestoreReport

__all__ = ["AsyncBase"]

P = ParamSpec("P")
R = TypeVar("R")


class AsyncBase:
    """What ``AsyncMemory`` adds to the twins: opening, closing, the worker threads, the
    actor, and the members whose twin is not a plain call (``export_lines``, ``restore``)."""

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

    async def __aenter__(self) -> Self:
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

    @property
    def actor(self) -> str:
        """Who the audit log names for calls made now."""
        return self.sync.actor

    @actor.setter
    def actor(self, value: str) -> None:
        self.sync.actor = value

    def acting_as(self, actor: str) -> contextlib.AbstractContextManager[None]:
        """Attribute the calls awaited inside the block (this task) to ``actor``."""
        return self.sync.acting_as(actor)

    async def warm(self) -> None:
        """Start loading the embedding model in the background (servers call this at start)."""
        return await self._run(self.sync.warm)

    async def export_lines(
        self,
        namespace: str | None = None,
        *,
        reveal_pii: bool = False,
        with_vectors: bool = False,
    ) -> list[str]:
        """JSON Lines: a header line, then one memory per line, oldest first, in pages."""
        lines = self.sync.export_lines  # the generator runs in the worker, page by page
        return await self._run(
            lambda: list(lines(namespace, reveal_pii=reveal_pii, with_vectors=with_vectors))
        )

    @staticmethod
    async def restore(
        snapshot: str | os.PathLike[str],
        *,
        home: str | os.PathLike[str] | None = None,
        settings: Settings | None = None,
        actor: str = "python",
    ) -> RestoreReport:
        """Replace a home's store by a verified snapshot (static: it may not open)."""
        # No limiter: a static call has no open AsyncMemory to share one with.
        return await anyio.to_thread.run_sync(functools.partial(
            Memory.restore, snapshot, home=home, settings=settings, actor=actor,
        ))
