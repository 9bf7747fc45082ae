"""``EmbeddedCodeRanker``: ranks code chunks by meaning with the engine's embedding model.

Vectors live in ``code_vectors`` (CODE_VECTORS_SQL), one row per chunk, tagged with the
embedding space that made them: a model change leaves old rows unused (searched never),
and a re-index of the changed files writes vectors in the new space. Search is an exact
cosine over the root's matrix with numpy; the matrix is cached per (root, space) and
reloaded when a cheap marker (row count, id sum and max, the root's last index time, or
a write through this ranker) says it changed.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.errors import ModelUnavailable
from ..recall.embed import Embedder
from ..storage.code import vectors as tables
from ..storage.protocol import Connection
from .terms import split_identifier

__all__ = ["BODY_LINES", "EmbeddedCodeRanker", "TEXT_CHARS", "dense_text"]

BODY_LINES = 30
TEXT_CHARS = 1000


def dense_text(
    name: str | None, path: str, signature: str | None, text: str, kind: str = ""
) -> str:
    """What is encoded for a chunk: its name (words split) or path, signature, first lines.

    The docstring is inside the first lines of a chunk's text, so it is not repeated. A
    prose section's name is its heading trail, already words, and its first line is the
    heading itself: the trail alone labels it.
    """
    label = path
    if name and kind in ("section", "intro"):
        first = 1 if kind == "section" else 0
        return f"{name}\n" + "\n".join(text.split("\n")[first:BODY_LINES])[:TEXT_CHARS]
    if name:
        words = " ".join(" ".join(split_identifier(part)) for part in name.split("."))
        label = f"{name} ({words})" if words and words != name else name
    body = "\n".join(text.split("\n")[:BODY_LINES])
    return " ".join(part for part in (label, signature or "", body) if part)[:TEXT_CHARS]


class EmbeddedCodeRanker:
    """The ``DenseCodeRanker`` of the engine: vectors from an :class:`Embedder`."""

    name = "dense"

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._cache: dict[tuple[int, str], tuple[tuple[Any, ...], Any, Any]] = {}
        self._generation = 0  # bumped by every write through this ranker
        self._lock = threading.Lock()

    def _space(self) -> str:
        if not self.embedder.wait() or self.embedder.space is None:
            raise ModelUnavailable(
                self.embedder.error
                or "no embedding model: set AIDE_MEMOIRE_CODE_DENSE=false for keyword-only code"
            )
        return self.embedder.space.key

    def add(self, tx: Connection, root_id: int, chunks: Sequence[tuple[int, str]]) -> None:
        if not chunks:
            return
        ids = [cid for cid, _ in chunks]
        # The chunk, file and symbol rows are already written in this transaction.
        meta = tables.chunk_labels(tx, ids)
        texts = []
        for cid, text in chunks:
            name, path, sig, kind = meta.get(cid, (None, "", None, ""))
            texts.append(dense_text(name, path, sig, text, kind))
        space = self._space()
        vectors = self.embedder.encode(texts)
        tables.put(tx, [(cid, root_id, space, vectors[i].tobytes())
                        for i, cid in enumerate(ids)])
        self._generation += 1

    def remove(self, tx: Connection, chunk_ids: Sequence[int]) -> None:
        tables.delete(tx, chunk_ids)
        self._generation += 1

    def _matrix(self, conn: Connection, root_id: int, space: str) -> tuple[Any, Any]:
        marker = (self._generation, *tables.marker(conn, root_id, space))
        with self._lock:
            cached = self._cache.get((root_id, space))
            if cached is not None and cached[0] == marker:
                return cached[1], cached[2]
        rows = tables.rows(conn, root_id, space)
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        dim = self.embedder.space.dim if self.embedder.space else 0
        matrix = (
            np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
            if rows
            else np.zeros((0, dim), dtype=np.float32)
        )
        with self._lock:
            self._cache[(root_id, space)] = (marker, ids, matrix)
        return ids, matrix

    def search(
        self,
        conn: Connection,
        root_id: int,
        query: str,
        limit: int,
        chunk_ids: Sequence[int] | None,
    ) -> list[tuple[int, float]]:
        space = self._space()
        ids, matrix = self._matrix(conn, root_id, space)
        if chunk_ids is not None:
            keep = np.isin(ids, np.asarray(list(chunk_ids), dtype=np.int64))
            ids, matrix = ids[keep], matrix[keep]
        if len(ids) == 0 or limit <= 0:
            return []
        scores = matrix @ self.embedder.encode([query])[0]  # unit vectors: dot = cosine
        top = np.argsort(-scores, kind="stable")[:limit]
        return [(int(ids[i]), float(scores[i])) for i in top]
