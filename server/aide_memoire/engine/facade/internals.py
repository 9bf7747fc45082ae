"""What a ``Memory`` is built of, behind one explicit door: ``Memory.internals``.

``Memory``'s own surface is its methods and the models and errors they return (pinned in
tests/test_contracts.py). The parts are for the few edge modules that run the engine
(``tests/test_contracts.py`` names them: serving, the web page's reads, the hooks' store
moves), for tests and for benchmarks; they are not a stable API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..recall.embed import Embedder
    from ..recall.mirror import VectorMirror
    from ..recall.recaller import Recaller
    from ..runtime.context import EngineContext
    from ..services import Services
    from ..storage.protocol import Database
    from ..storage.repositories import MemoryRows, VectorIndex

__all__ = ["Internals"]


@dataclass(frozen=True)
class Internals:
    """The context (every part, made in one order) and the services over it."""

    context: EngineContext
    services: Services

    @property
    def db(self) -> Database:
        return self.context.db

    @property
    def store(self) -> MemoryRows:
        return self.context.store

    @property
    def embedder(self) -> Embedder:
        return self.context.embedder

    @property
    def recaller(self) -> Recaller:
        return self.context.recaller

    @property
    def tables(self) -> VectorIndex:
        return self.context.tables

    @property
    def mirror(self) -> VectorMirror:
        return self.context.mirror
