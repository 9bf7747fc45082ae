"""The seam for dense (embedding) retrieval of code, and score fusion.

The keyword ranking (FTS5 BM25) is complete on its own. When a ``DenseCodeRanker`` is
handed to ``CodeIndex`` it is told about every chunk written and removed, in the same
transaction, and its ranking is fused with BM25 by min-max scaled scores (which beat
reciprocal-rank fusion in the project's recall experiments).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..storage.protocol import Connection

__all__ = ["DenseCodeRanker", "fuse"]


class DenseCodeRanker(Protocol):
    """What the embedding module provides to rank code chunks by meaning."""

    name: str

    def add(self, tx: Connection, root_id: int, chunks: Sequence[tuple[int, str]]) -> None:
        """Embed and store (chunk id, text) pairs inside the indexing transaction."""

    def remove(self, tx: Connection, chunk_ids: Sequence[int]) -> None:
        """Forget the vectors of these chunks inside the same transaction."""

    def search(
        self,
        conn: Connection,
        root_id: int,
        query: str,
        limit: int,
        chunk_ids: Sequence[int] | None,
    ) -> list[tuple[int, float]]:
        """(chunk id, similarity) best first; only among ``chunk_ids`` when given."""


def _scaled(results: list[tuple[int, float]]) -> dict[int, float]:
    if not results:
        return {}
    scores = [s for _, s in results]
    low, high = min(scores), max(scores)
    span = high - low
    return {cid: (s - low) / span if span > 0 else 1.0 for cid, s in results}


def fuse(
    rankings: dict[str, list[tuple[int, float]]], weights: dict[str, float]
) -> list[tuple[int, float]]:
    """Weighted sum of min-max scaled scores; a chunk missing from a ranking scores 0 there."""
    total: dict[int, float] = {}
    for name, results in rankings.items():
        for cid, scaled in _scaled(results).items():
            total[cid] = total.get(cid, 0.0) + weights.get(name, 1.0) * scaled
    return sorted(total.items(), key=lambda item: (-item[1], item[0]))
