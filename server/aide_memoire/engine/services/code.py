"""The code index service: the index over this store, loaded on first use.

The code index needs the ``code`` extra; nothing of it is imported before a caller
asks for it, so a store without the extra opens (and says which extra is missing).
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from ..core import parts

if TYPE_CHECKING:
    from ..code.index import CodeIndex, Progress
    from ..code.models import CodeHit, CodeIndexReport, DocLink, SymbolHit
    from ..runtime.context import EngineContext

__all__ = ["CodeService"]


class CodeService:
    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx
        self._index: CodeIndex | None = None
        self._lock = threading.Lock()  # two first calls must not build two indexes

    @property
    def index(self) -> CodeIndex:
        """The code index over this store (loaded on first use: it needs the code extra)."""
        with self._lock:
            if self._index is None:
                db = self.ctx.require_sqlite("the code index")
                parts.require("code")  # a clear error naming the extra, not ModuleNotFoundError
                from ..code.index import CodeIndex

                settings, embedder = self.ctx.settings, self.ctx.embedder
                dense = None
                wanted = settings.code_dense or settings.docs_dense
                if wanted and embedder.enabled and embedder.wait():
                    from ..code.vectors import EmbeddedCodeRanker

                    dense = EmbeddedCodeRanker(embedder)
                self._index = CodeIndex(
                    db, dense=dense, secret_files=settings.code_secret_files,
                    dense_docs_only=not settings.code_dense,
                )
            return self._index

    def code_index(
        self, root: str | os.PathLike[str], *, progress: Progress | None = None
    ) -> CodeIndexReport:
        """Index (or re-index, incrementally) the source tree at ``root``."""
        return self.index.index(os.fspath(root), progress=progress)

    def code_search(
        self, root: str | os.PathLike[str], query: str, *, language: str | None = None,
        limit: int = 10, kind: str | None = None,
    ) -> list[CodeHit]:
        """The chunks of ``root``'s index most relevant to ``query``, best first."""
        return self.index.search(
            os.fspath(root), query, language=language, limit=limit, kind=kind
        )

    def code_links(
        self, root: str | os.PathLike[str], *, path: str | None = None
    ) -> list[DocLink]:
        """The links of ``root``'s indexed prose pages, resolved against the index."""
        return self.index.links(os.fspath(root), path)

    def code_symbol(
        self, root: str | os.PathLike[str], name: str, *, limit: int = 50
    ) -> list[SymbolHit]:
        """Where ``name`` is defined in ``root``'s index, then where it is used."""
        return self.index.symbol(os.fspath(root), name, limit=limit)
