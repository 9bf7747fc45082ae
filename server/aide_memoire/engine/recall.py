"""Recall: the retrievers, their fusion, and hits that say why they came back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .migrations import FTS_COLUMNS
from .models import Hit, MemoryRecord
from .store import RowFilter, Store
from .text import fts_query, query_terms

__all__ = ["KEYWORD_WEIGHTS", "Recaller", "RecallRequest"]

# bm25() column weights, in FTS_COLUMNS order: content, context, speaker, tags, dates.
KEYWORD_WEIGHTS: dict[str, float] = {
    "content": 1.0,
    "context": 0.5,
    "speaker": 0.5,
    "tags": 1.0,
    "dates": 0.5,
}


@dataclass
class RecallRequest:
    query: str
    where: RowFilter
    limit: int


def to_hit(record: MemoryRecord, score: float, scores: dict[str, float], ranks: dict[str, int]) -> Hit:
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


class Recaller:
    """Keyword recall over the whole namespace through FTS5's BM25."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.weights: Sequence[float] = [KEYWORD_WEIGHTS[c] for c in FTS_COLUMNS]

    def recall(self, conn: Any, request: RecallRequest) -> list[Hit]:
        match = fts_query(query_terms(request.query))
        if match is None:
            return []
        ranked = self.store.keyword_search(conn, match, request.where, request.limit, self.weights)
        records = self.store.records(conn, [rowid for rowid, _ in ranked])
        hits: list[Hit] = []
        for rank, (rowid, score) in enumerate(ranked, start=1):
            record = records.get(rowid)
            if record is not None:
                hits.append(to_hit(record, score, {"bm25": score}, {"bm25": rank}))
        return hits
