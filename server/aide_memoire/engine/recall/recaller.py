"""Recall: BM25 over FTS5 and dense k-NN over every row, fused (fusion.py), then cut.

Each retriever ranks the *whole* namespace (FTS5 from its index, the dense side from a
matrix of every vector); fusion looks at the best ``depth`` of each. A hit keeps each
retriever's score and rank so a user can see why it came back.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...logs import get_logger
from ..core.errors import InvalidInput
from ..core.models import Hit, MemoryRecord
from ..core.text import query_terms
from ..storage.migrations import FTS_COLUMNS
from ..storage.repositories import MemoryRows, VectorIndex
from ..storage.store import RowFilter
from .embed import Embedder
from .fusion import KEYWORD_WEIGHTS, Candidates, RecallTuning
from .keyword_path import CommonTerms, KeywordCaches, KeywordPath, SpeakerNames, row_fact
from .mirror import VectorMirror
from .query_form import as_statement
from .rerank import Reranker, floor_for
from .stages import RowFact

__all__ = ["KEYWORD_WEIGHTS", "Adjuster", "DenseProfile", "Recaller", "RecallRequest",
           "RecallTuning"]

log = get_logger(__name__)

# Added to a re-ranked row's probability: above every fused score (at most ~1.2).
RERANKED = 10.0


@dataclass
class RecallRequest:
    query: str
    where: RowFilter
    limit: int
    # Benchmark mode: pure relevance, no adjuster runs (lifecycle scoring, supersession).
    pure: bool = False


# A stage after fusion: (conn, request, fused scores by rowid) -> the scores to rank by.
# It may change scores and add candidates (a rowid it adds must pass request.where).
Adjuster = Callable[[Any, RecallRequest, dict[int, float]], dict[int, float]]


@dataclass(frozen=True)
class DenseProfile:
    """One query's cosines against every row of a filter's namespaces: the best rows
    (passing the filter, best first) and the bulk's mean and spread, which say how close
    the query is to everything (a generic query is close to many rows)."""

    best: list[tuple[MemoryRecord, float]]
    mean: float
    std: float
    rows: int


def to_hit(
    record: MemoryRecord, score: float, scores: dict[str, float], ranks: dict[str, int]
) -> Hit:
    """The hit carries every field declared recalled (core/fields.py; Hit.of is generated)."""
    return Hit.of(record, score, scores, ranks)


class Recaller:
    """Hybrid recall; degrades to keyword-only when the dense side is not live."""

    def __init__(
        self,
        store: MemoryRows,
        *,
        embedder: Embedder | None = None,
        tables: VectorIndex | None = None,
        cache: VectorMirror | None = None,
        tuning: RecallTuning | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        self.store = store
        self.reranker = reranker
        self.embedder = embedder
        self.tables = tables
        self.cache = cache or VectorMirror(store.vectors)
        self.tuning = tuning or RecallTuning()
        # The keyword side's caches (keyword_path.py), shared with nothing else.
        self.caches = KeywordCaches()
        self.names: SpeakerNames = self.caches.names
        self.common: CommonTerms = self.caches.common
        self._queries: dict[tuple[str, str], np.ndarray] = {}
        self._lock = threading.Lock()
        # Run in order after fusion unless the request is pure (see Adjuster).
        self.adjusters: list[tuple[str, Adjuster]] = []

    def add_adjuster(self, name: str, adjust: Adjuster) -> None:
        """Apply ``adjust`` after fusion, after the adjusters added before it."""
        if name in self.adjuster_names():
            raise ValueError(f"recall adjuster {name!r} is registered already")
        self.adjusters.append((name, adjust))

    def adjuster_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.adjusters)

    @property
    def tuning(self) -> RecallTuning:
        return self._tuning

    @tuning.setter
    def tuning(self, value: RecallTuning) -> None:
        self._tuning = value
        self.weights: Sequence[float] = [value.keyword_weights[c] for c in FTS_COLUMNS]

    def dense_live(self) -> bool:
        return bool(
            self.embedder is not None
            and self.embedder.enabled
            and self.tables is not None
            and self.tables.vec_available
        )

    def _dense(
        self, conn: Any, request: RecallRequest, must: dict[int, float], query: str,
        vector: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, float, float] | None:
        """Dense cosines (rowids ascending) with the namespace's low and high, or None.

        Every row of a namespace up to ``tuning.shortlist_above`` rows is scored exactly;
        a bigger one is ranked by sign bits first and its best ``tuning.shortlist`` rows
        (plus the keyword matches, ``must``) are scored exactly. ``vector``: score this
        query vector instead of ``query``'s encoding (dense feedback).
        """
        if not self.dense_live():
            return None
        assert self.embedder is not None
        if not self.embedder.wait():
            return None
        space = self.embedder.space
        assert space is not None
        found = self.tables.table_of(conn, space) if self.tables else None
        if not found:
            return None
        query_vector = self._query_vector(query) if vector is None else vector
        tuning = self.tuning
        rowids, scores, low, high = self.cache.scores(
            conn,
            space,
            found,
            request.where.namespaces,
            query_vector,
            must=np.fromiter(must, dtype=np.int64, count=len(must)),
            shortlist=max(tuning.shortlist, tuning.depth),
            exact_up_to=tuning.shortlist_above,
        )
        if not len(rowids):
            return None
        return rowids, scores, low, high

    def _query_vector(self, query: str) -> np.ndarray:
        """The query's vector; the last few are kept (per embedding space), so that a
        recall and a dense profile of the same prompt (the prompt hook's gate) encode
        it once."""
        assert self.embedder is not None
        space = self.embedder.space
        key = (space.key if space is not None else "", query)
        with self._lock:
            cached = self._queries.get(key)
        if cached is not None:
            return cached
        vector: np.ndarray = self.embedder.encode([query])[0]
        with self._lock:
            if len(self._queries) >= 8:
                self._queries.pop(next(iter(self._queries)))
            self._queries[key] = vector
        return vector

    def dense_profile(
        self, conn: Any, query: str, where: RowFilter, k: int
    ) -> DenseProfile | None:
        """The query's cosine against every row of ``where``'s namespaces, summarised:
        the ``k`` best rows that pass ``where`` and the mean and spread of all. Every
        row exactly, at any size (one matrix-vector product over the mirror: a few ms at
        100k rows), so the mean and spread mean the same in every namespace. None when
        the dense side is not live."""
        if not self.dense_live():
            return None
        assert self.embedder is not None
        if not self.embedder.wait() or self.embedder.space is None or self.tables is None:
            return None
        space = self.embedder.space
        table = self.tables.table_of(conn, space)
        if not table:
            return None
        rowids, scores, _, _ = self.cache.scores(
            conn, space, table, where.namespaces, self._query_vector(query), exact_up_to=None
        )
        if not len(rowids):
            return None
        # Twice k looked at: a few of the best may be filtered out (quarantined, expired).
        wide = min(2 * k, len(scores))
        top = np.argpartition(-scores, wide - 1)[:wide]
        order = top[np.argsort(-scores[top], kind="stable")]
        picked = [int(rowids[i]) for i in order]
        allowed = self.store.passing(conn, picked, where)
        keep = [r for r in picked if r in allowed][:k]
        records = self.store.records(conn, keep)
        cosine = dict(zip(rowids[order].tolist(), scores[order].tolist(), strict=True))
        values = scores.astype(np.float64)
        return DenseProfile(
            best=[(records[r], float(cosine[r])) for r in keep if r in records],
            mean=float(values.mean()), std=float(values.std()), rows=len(values),
        )

    def candidates(self, conn: Any, request: RecallRequest) -> Candidates:
        """Both retrievers' scores for the query, before fusion (see fusion.fuse): the
        keyword path (keyword_path.py) with this recaller's dense side plugged in."""
        return self.keyword_path().candidates(
            conn, request.query, request.where, request.limit,
            lambda rowids: {r: m.content for r, m in self.store.records(conn, rowids).items()},
            dense=lambda found, names: self._dense_side(conn, request, found, names))

    def keyword_path(self) -> KeywordPath:
        """The keyword side and the stages after fusion, as this recaller runs them."""
        return KeywordPath(self.store, self.tuning, self.weights, self.caches)

    def _dense_side(self, conn: Any, request: RecallRequest, found: Candidates,
                    names: set[str]) -> None:
        """Fill ``found``'s dense side: the best ``depth`` rows and every keyword match,
        for the query without ``names`` (the speakers the speaker boost handles)."""
        depth = max(self.tuning.depth, request.limit)
        keyword = found.keyword
        dense_query = without_names(request.query, names) if names else request.query
        if self.tuning.dense_query_form == "statement":
            dense_query = as_statement(dense_query)
        elif self.tuning.dense_query_form != "asked":
            raise InvalidInput(f"unknown dense query form {self.tuning.dense_query_form!r}: "
                               "expected 'asked' or 'statement'")
        dense_all = self._dense(conn, request, keyword, dense_query)
        if dense_all is not None:
            moved = self._fed_back(conn, request, dense_all, dense_query)
            if moved is not None:
                dense_all = self._dense(conn, request, keyword, dense_query, moved) or dense_all
        if dense_all is not None:
            rowids, scores, low, high = dense_all
            top = np.argpartition(-scores, min(depth, len(scores)) - 1)[:depth]
            picked = {int(rowids[i]): float(scores[i]) for i in top}
            allowed = self.store.passing(conn, picked, request.where)
            picked = {r: s for r, s in picked.items() if r in allowed}
            if keyword:
                # rowids come sorted: look the keyword rows up without a per-row dict.
                wanted = np.fromiter(keyword, dtype=np.int64, count=len(keyword))
                at = np.minimum(np.searchsorted(rowids, wanted), len(rowids) - 1)
                for rowid, i in zip(wanted.tolist(), at.tolist(), strict=True):
                    if rowid not in picked and int(rowids[i]) == rowid:
                        picked[rowid] = float(scores[i])
            found.dense, found.dense_low, found.dense_high = picked, low, high
            found.dense_live = True

    def _fed_back(
        self, conn: Any, request: RecallRequest,
        dense_all: tuple[np.ndarray, np.ndarray, float, float], query: str,
    ) -> np.ndarray | None:
        """Rocchio on the dense side: the query's vector plus ``dense_feedback_weight``
        times the mean of the unit stored vectors of its best ``dense_feedback_docs``
        rows that pass the filter, as a unit vector; None when off or nothing is found."""
        tuning = self.tuning
        docs, weight = tuning.dense_feedback_docs, tuning.dense_feedback_weight
        if weight < 0 or docs < 0 or docs > tuning.depth:
            raise InvalidInput(f"dense feedback: {docs} docs at weight {weight}: expected "
                               f"0-{tuning.depth} docs and a weight >= 0")
        if docs == 0 or weight == 0 or self.tables is None or self.embedder is None:
            return None
        space = self.embedder.space
        table = self.tables.table_of(conn, space) if space is not None else None
        rowids, scores = dense_all[0], dense_all[1]
        if table is None or not len(scores):
            return None
        wide = min(3 * docs, len(scores))
        top = np.argpartition(-scores, wide - 1)[:wide]
        order = [int(rowids[i]) for i in top[np.argsort(-scores[top], kind="stable")]]
        allowed = self.store.passing(conn, order, request.where)
        best = [r for r in order if r in allowed][:docs]
        vectors = self.cache.reads.raw_vectors(conn, table, best)
        if not vectors:
            return None
        stacked = np.stack([vectors[r] for r in best if r in vectors]).astype(np.float32)
        stacked /= np.maximum(np.linalg.norm(stacked, axis=1, keepdims=True), 1e-12)
        query_vector = np.asarray(self._query_vector(query), np.float32)
        moved = query_vector / max(float(np.linalg.norm(query_vector)), 1e-12)
        moved = moved + weight * stacked.mean(axis=0)
        norm = float(np.linalg.norm(moved))
        return moved / norm if norm > 0 else None

    def recall(self, conn: Any, request: RecallRequest) -> list[Hit]:
        found = self.candidates(conn, request)
        keyword, dense = found.keyword, found.dense
        if not keyword and not dense:
            return []
        read: dict[int, MemoryRecord] = {}

        def contents(rowids: Iterable[int]) -> dict[int, str]:
            read.update(self.store.records(conn, [r for r in rowids if r not in read]))
            return {r: read[r].content for r in rowids if r in read}

        def facts(rowids: Iterable[int]) -> dict[int, RowFact]:
            read.update(self.store.records(conn, [r for r in rowids if r not in read]))
            return {r: _fact(read[r]) for r in rowids if r in read}

        fused = self.keyword_path().rank(found, contents, facts, request.query)
        reranked: dict[int, float] = {}
        if self.reranker is not None and self.reranker.live():
            fused, reranked = self._rerank(conn, request, fused)
        if not request.pure:
            for _name, adjust in self.adjusters:
                fused = adjust(conn, request, fused)
        order = sorted(fused, key=lambda r: (-fused[r], r))[: request.limit]
        records = {r: read[r] for r in order if r in read}
        records.update(self.store.records(conn, [r for r in order if r not in read]))
        keyword_rank = _ranks(keyword)
        dense_rank = _ranks(dense)
        rerank_rank = _ranks(reranked)
        hits: list[Hit] = []
        for rowid in order:
            record = records.get(rowid)
            if record is None:
                continue
            scores_out: dict[str, float] = {}
            ranks: dict[str, int] = {}
            if rowid in keyword:
                scores_out["bm25"], ranks["bm25"] = keyword[rowid], keyword_rank[rowid]
            if rowid in dense:
                scores_out["dense"], ranks["dense"] = dense[rowid], dense_rank[rowid]
            if rowid in reranked:
                scores_out["rerank"], ranks["rerank"] = reranked[rowid], rerank_rank[rowid]
            hits.append(to_hit(record, fused[rowid], scores_out, ranks))
        return hits

    def _rerank(
        self, conn: Any, request: RecallRequest, fused: dict[int, float]
    ) -> tuple[dict[int, float], dict[int, float]]:
        """Order the best candidates by the cross-encoder; drop those under the floor.

        Re-ranked rows score RERANKED + probability, so they stay above the rest, which
        keep their fused scores. A re-ranker failing here costs the stage, not the recall.
        """
        assert self.reranker is not None
        tuning = self.reranker.tuning
        top = sorted(fused, key=lambda r: (-fused[r], r))[: max(tuning.depth, request.limit)]
        records = self.store.records(conn, top)
        ids = [r for r in top if r in records]
        try:
            probabilities = self.reranker.probabilities(
                request.query, [records[r].content for r in ids]
            )
        except Exception as exc:  # noqa: BLE001 - see docstring
            log.warning("rerank_failed", error=str(exc))
            return fused, {}
        floor = floor_for(request.limit, tuning.base_floor)
        read = dict(zip(ids, probabilities, strict=True))
        out = {r: score for r, score in fused.items() if r not in read}
        out.update({r: RERANKED + p for r, p in read.items() if p >= floor})
        return out, read


def _fact(record: MemoryRecord) -> RowFact:
    return row_fact(record.namespace, record.session_id,
                    record.observed_at or record.created_at, record.content, record.speaker)


def without_names(query: str, names: set[str]) -> str:
    """The query without the words of ``names`` (case-folded tokens) and their "'s";
    the query itself when nothing else would be left."""
    text = _NAME_WORD.sub(
        lambda m: "" if _fold_name(m.group(1)) in names else m.group(0), query)
    text = re.sub(r"\s+", " ", text).strip()
    return text if query_terms(text) else query


_NAME_WORD = re.compile(r"\b([^\W\d_][\w-]*)(?:['’]s\b)?")


def _fold_name(word: str) -> str:
    return word.casefold()


def _ranks(scores: dict[int, float]) -> dict[int, int]:
    return {r: i for i, r in enumerate(sorted(scores, key=lambda r: -scores[r]), 1)}
