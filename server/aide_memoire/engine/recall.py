"""Recall: BM25 over FTS5 and dense k-NN over every row, fused, then filtered and cut.

Each retriever ranks the *whole* namespace (FTS5 from its index, the dense side from a
matrix of every vector); fusion looks at the best ``depth`` of each. A hit keeps each
retriever's score and rank so a user can see why it came back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .embed import Embedder
from .migrations import FTS_COLUMNS
from .models import Hit, MemoryRecord
from .store import RowFilter, Store
from .text import fts_query, query_terms
from .vectors import VectorCache, VectorTables

__all__ = ["KEYWORD_WEIGHTS", "Recaller", "RecallRequest", "RecallTuning"]

# bm25() column weights, in FTS_COLUMNS order: content, context, speaker, tags, dates.
KEYWORD_WEIGHTS: dict[str, float] = {
    "content": 1.0,
    "context": 0.5,
    "speaker": 0.5,
    "tags": 1.0,
    "dates": 0.5,
}


@dataclass(frozen=True)
class RecallTuning:
    """The fusion's constants (measured on the LOCOMO development split: docs/benchmarks.md)."""

    depth: int = 200
    keyword_weight: float = 0.5
    speaker_boost: float = 0.1
    keyword_weights: dict[str, float] = field(default_factory=lambda: dict(KEYWORD_WEIGHTS))


@dataclass
class RecallRequest:
    query: str
    where: RowFilter
    limit: int


def to_hit(
    record: MemoryRecord, score: float, scores: dict[str, float], ranks: dict[str, int]
) -> Hit:
    return Hit(
        id=record.id,
        namespace=record.namespace,
        content=record.content,
        kind=record.kind,
        score=score,
        scores=scores,
        ranks=ranks,
        tags=record.tags,
        metadata=record.metadata,
        source=record.source,
        observed_at=record.observed_at,
        created_at=record.created_at,
        status=record.status,
        session_id=record.session_id,
        speaker=record.speaker,
        position=record.position,
    )


def _minmax(values: dict[int, float]) -> dict[int, float]:
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    span = high - low
    if span <= 0:
        return {key: 1.0 for key in values}
    return {key: (value - low) / span for key, value in values.items()}


class Recaller:
    """Hybrid recall; degrades to keyword-only when the dense side is not live."""

    def __init__(
        self,
        store: Store,
        *,
        embedder: Embedder | None = None,
        tables: VectorTables | None = None,
        cache: VectorCache | None = None,
        tuning: RecallTuning | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.tables = tables
        self.cache = cache or VectorCache()
        self.tuning = tuning or RecallTuning()
        self.weights: Sequence[float] = [self.tuning.keyword_weights[c] for c in FTS_COLUMNS]

    def dense_live(self) -> bool:
        return bool(
            self.embedder is not None
            and self.embedder.enabled
            and self.tables is not None
            and self.tables.vec_available
        )

    def _dense(
        self, conn: Any, request: RecallRequest, depth: int
    ) -> tuple[dict[int, float], Any, tuple[Any, str] | None]:
        if not self.dense_live():
            return {}, None, None
        assert self.embedder is not None
        if not self.embedder.wait():
            return {}, None, None
        space = self.embedder.space
        assert space is not None
        found = conn.execute(
            "SELECT table_name FROM vector_spaces WHERE key = ?", (space.key,)
        ).fetchone()
        if not found:
            return {}, None, None
        table = str(found[0])
        query_vector = self.embedder.encode([request.query])[0]
        ranked = self.cache.search(
            conn, space, table, request.where.namespaces, query_vector, depth
        )
        return dict(ranked), query_vector, (space, table)

    def recall(self, conn: Any, request: RecallRequest) -> list[Hit]:
        tuning = self.tuning
        depth = max(tuning.depth, request.limit)
        match = fts_query(query_terms(request.query))
        keyword: dict[int, float] = {}
        if match is not None:
            keyword = dict(
                self.store.keyword_search(conn, match, request.where, depth, self.weights)
            )
        dense, query_vector, space_table = self._dense(conn, request, depth)
        if dense:
            dense = self._allowed(conn, dense, request.where)
        candidates = set(keyword) | set(dense)
        if not candidates:
            return []
        keyword_rank = {r: i for i, r in enumerate(sorted(keyword, key=lambda r: -keyword[r]), 1)}
        dense_rank = {r: i for i, r in enumerate(sorted(dense, key=lambda r: -dense[r]), 1)}
        if dense:
            fused = self._fuse(keyword, dense, tuning.keyword_weight)
        else:
            fused = _minmax(keyword)
        records = self.store.records(conn, candidates)
        fused = self._boost_speaker(request.query, fused, records, tuning.speaker_boost)
        order = sorted(fused, key=lambda r: (-fused[r], r))[: request.limit]
        hits: list[Hit] = []
        for rowid in order:
            record = records.get(rowid)
            if record is None:
                continue
            scores: dict[str, float] = {}
            ranks: dict[str, int] = {}
            if rowid in keyword:
                scores["bm25"], ranks["bm25"] = keyword[rowid], keyword_rank[rowid]
            if rowid in dense:
                scores["dense"], ranks["dense"] = dense[rowid], dense_rank[rowid]
            hits.append(to_hit(record, fused[rowid], scores, ranks))
        return hits

    @staticmethod
    def _fuse(keyword: dict[int, float], dense: dict[int, float], alpha: float) -> dict[int, float]:
        k_norm, d_norm = _minmax(keyword), _minmax(dense)
        return {
            r: alpha * k_norm.get(r, 0.0) + (1.0 - alpha) * d_norm.get(r, 0.0)
            for r in set(keyword) | set(dense)
        }

    @staticmethod
    def _boost_speaker(
        query: str, fused: dict[int, float], records: dict[int, MemoryRecord], boost: float
    ) -> dict[int, float]:
        if boost <= 0:
            return fused
        words = set(query_terms(query))
        out = dict(fused)
        for rowid, record in records.items():
            if record.speaker and rowid in out:
                names = set(query_terms(record.speaker))
                if names and names <= words:
                    out[rowid] += boost
        return out

    def _allowed(self, conn: Any, dense: dict[int, float], where: RowFilter) -> dict[int, float]:
        clause, params = where.sql("m")
        ids = list(dense)
        allowed: set[int] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            allowed.update(
                int(r)
                for (r,) in conn.execute(
                    f"SELECT m.rowid FROM memories m WHERE m.rowid IN "
                    f"({','.join('?' * len(chunk))}) AND {clause}",
                    [*chunk, *params],
                )
            )
        return {r: s for r, s in dense.items() if r in allowed}


def unit(vector: Any) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array
