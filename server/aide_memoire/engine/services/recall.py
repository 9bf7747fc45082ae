"""The recall service: the hybrid recaller over the whole namespace, and its stages."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Unpack

from ..core import parts
from ..core.errors import InvalidInput
from ..core.models import FieldFilters, Hit, Stage
from ..recall.recaller import DenseProfile, RecallRequest
from .query import check_limit, row_filter

if TYPE_CHECKING:
    from ..runtime.context import EngineContext

__all__ = ["RecallService"]


class RecallService:
    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx
        self.db = ctx.db
        self.recaller = ctx.recaller
        self.embedder = ctx.embedder
        self.reranker = ctx.reranker

    def warm(self) -> None:
        """Start loading the embedding model in the background (servers call this at start)."""
        if self.recaller.dense_live():
            self.embedder.warm()
        if self.reranker.configured and self.reranker.live():
            threading.Thread(target=self.reranker.load, name="reranker-load", daemon=True).start()

    def recall(
        self,
        query: str,
        *,
        namespace: str | Sequence[str] = "default",
        limit: int = 10,
        kinds: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        as_of: datetime | str | None = None,
        include_archived: bool = False,
        pure: bool = False,
        include_superseded: bool = False,
        **equals: Unpack[FieldFilters],
    ) -> list[Hit]:
        """The memories most relevant to ``query``, best first, searching every row.

        ``as_of`` answers from what was valid at that time (superseded memories included
        if they were current then; later ones left out). ``include_archived`` adds the
        cold tier; ``pure`` ranks by relevance alone (no lifecycle scoring: benchmarks).
        ``include_superseded`` adds replaced memories (history); each ranks just below
        what replaced it and names it in ``superseded_by``. ``equals``: the exact matches
        of the fields declared filterable (core/fields.py).
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query is empty; say what to recall")
        where = row_filter(namespace, tags, kinds, None, since, until, as_of,
                           include_archived=include_archived,
                           include_superseded=include_superseded, equals=equals)
        request = RecallRequest(query=query, where=where, limit=check_limit(limit), pure=pure)
        with self.db.read() as conn:
            hits = self.recaller.recall(conn, request)
        self.ctx.access.note(hit.id for hit in hits)
        if self.ctx.access.due():
            self.ctx.flush_access()
        return hits

    def dense_profile(
        self, query: str, *, namespace: str | Sequence[str] = "default", k: int = 50
    ) -> DenseProfile | None:
        """The query's cosines against every active row of the namespace: its ``k`` best
        rows and the mean and spread of all (None without the model). The prompt hook's
        gate reads it to tell a prompt about one memory from one close to everything."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query is empty; say what to recall")
        where = row_filter(namespace, None, None, None, None, None)
        with self.db.read() as conn:
            return self.recaller.dense_profile(conn, query, where, check_limit(k))

    def rerank_stage(self) -> Stage:
        reranker = self.reranker
        if not reranker.configured or not reranker.live():
            return Stage(name="rerank", live=False, detail=f"off: {reranker.error}")
        tuning = reranker.tuning
        return Stage(
            name="rerank",
            live=True,
            detail=f"cross-encoder {reranker.path} over the best {tuning.depth}, floor "
            f"{tuning.base_floor} at limit 10 (scaled by 10/limit above)",
        )

    def dense_stage(self) -> Stage:
        hint = parts.install_hint("vectors", "embeddings")
        if hint is not None:  # both are needed: name every missing one, not the first
            return Stage(name="dense", live=False,
                         detail=f"keyword-only: dense recall needs {hint}")
        vectors = self.db.vector_support()
        if not vectors.available:
            return Stage(name="dense", live=False, detail=f"keyword-only: {vectors.error}")
        if not self.embedder.enabled:
            return Stage(name="dense", live=False, detail=f"keyword-only: {self.embedder.error}")
        if not self.embedder.check():
            return Stage(name="dense", live=False, detail=f"keyword-only: {self.embedder.error}")
        space = self.embedder.space
        if space is None:
            state = "loading" if self.embedder.loading else "loads on first use"
            return Stage(
                name="dense",
                live=True,
                detail=f"model {self.embedder.spec} ({state}); "
                f"{vectors.name} {vectors.version}",
            )
        return Stage(
            name="dense",
            live=True,
            detail=f"model {space.model} ({space.dim}-d, loaded, {self.embedder.runtime}); "
            f"{vectors.name} {vectors.version}",
        )
