"""Recall: BM25 over FTS5 and dense k-NN over every row, fused (fusion.py), then cut.

Each retriever ranks the *whole* namespace (FTS5 from its index, the dense side from a
matrix of every vector); fusion looks at the best ``depth`` of each. A hit keeps each
retriever's score and rank so a user can see why it came back.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...logs import get_logger
from ..core.models import Hit, MemoryRecord
from ..core.text import (
    addresses_someone,
    feedback_terms,
    named_words,
    names_something,
    query_shape,
    query_terms,
    states_change,
)
from ..storage.migrations import FTS_COLUMNS
from ..storage.repositories import MemoryRows, VectorIndex
from ..storage.store import RowFilter
from .calibrate import DocumentCounts
from .embed import Embedder
from .fusion import KEYWORD_WEIGHTS, Candidates, RecallTuning, fuse, prefer_timed
from .keyword_query import keyword_match
from .keyword_query import keyword_terms as searched_terms
from .mirror import VectorMirror
from .rerank import Reranker, floor_for
from .stages import (
    RowFact,
    lift_addressed,
    lift_sessions,
    prefer_named,
    prefer_recent,
    prefer_restated,
)

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
        self.names = SpeakerNames()
        self.common = CommonTerms()
        self.counts = DocumentCounts()
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
        self, conn: Any, request: RecallRequest, must: dict[int, float], query: str
    ) -> tuple[np.ndarray, np.ndarray, float, float] | None:
        """Dense cosines (rowids ascending) with the namespace's low and high, or None.

        Every row of a namespace up to ``tuning.shortlist_above`` rows is scored exactly;
        a bigger one is ranked by sign bits first and its best ``tuning.shortlist`` rows
        (plus the keyword matches, ``must``) are scored exactly.
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
        query_vector = self._query_vector(query)
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
        """Both retrievers' scores for the query, before fusion (see fusion.fuse)."""
        tuning = self.tuning
        depth = max(tuning.depth, request.limit)
        terms = query_terms(request.query)
        names = self.names.lookup(conn, self.store, request.where.namespaces)
        keyword_terms, named = searched_terms(terms, names, tuning)
        match = self._keyword_match(conn, keyword_terms)
        keyword: dict[int, float] = {}
        if match is not None:
            keyword = dict(
                self.store.keyword_search(
                    conn, match, request.where, max(tuning.keyword_depth, depth), self.weights
                )
            )
        found = Candidates(keyword=keyword, dense={}, shape=query_shape(request.query))
        if keyword and tuning.keyword_scale != "minmax":
            found.keyword_ideal = self.counts.ideal(conn, self.store, keyword_terms)
        dense_query = request.query
        if not tuning.names_in_dense_query and named:
            dense_query = without_names(request.query, {t for t in terms if t in names})
        dense_all = self._dense(conn, request, keyword, dense_query)
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
        if tuning.feedback_docs > 0:
            found.feedback = self._feedback(conn, request, found, set(terms) | set(names))
        if len(named) == 1:
            (who,) = named
            found.speaker_rows = {
                rowid
                for rowid, name in self.store.speakers(conn, found.rows()).items()
                if name == who
            }
        return found

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

        tuning = self.tuning
        fused = prefer_timed(fuse(found, tuning), found.shape, tuning, contents)
        fused = lift_sessions(fused, facts, tuning)
        fused = lift_addressed(fused, found.speaker_rows, facts, tuning)
        fused = prefer_named(fused, found.shape, facts, tuning)
        fused = prefer_recent(fused, found.shape, facts, tuning)
        fused = prefer_restated(fused, found.shape, found.speaker_rows, facts, tuning)
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

    def _feedback(
        self, conn: Any, request: RecallRequest, found: Candidates, known: set[str]
    ) -> dict[int, float]:
        """Keyword scores for the words the best rows of both sides share (RM3-like)."""
        tuning = self.tuning
        best: list[int] = []
        for side in (found.keyword, found.dense):
            best += sorted(side, key=lambda r: (-side[r], r))[: tuning.feedback_docs]
        texts = [r.content for r in self.store.records(conn, dict.fromkeys(best)).values()]
        terms = feedback_terms(texts, known, tuning.feedback_terms)
        match = self._keyword_match(conn, terms) if terms else None
        if match is None:
            return {}
        return dict(self.store.keyword_search(
            conn, match, request.where, max(tuning.keyword_depth, tuning.depth), self.weights
        ))

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

    def _keyword_match(self, conn: Any, terms: list[str]) -> str | None:
        """The FTS5 query for ``terms`` (see keyword_query.keyword_match)."""
        return keyword_match(
            terms, self.store.size_hint(conn), self.tuning,
            lambda words, threshold: self.common.check(conn, self.store, words, threshold),
        )



class CommonTerms:
    """Which words are too common to rank by, remembered for a minute per threshold.

    A word's document frequency moves slowly; a stale answer only shifts which words
    the keyword side ranks by, never what is searched.
    """

    def __init__(self, ttl_s: float = 60.0, size: int = 4096) -> None:
        self.ttl_s = ttl_s
        self.size = size
        self._seen: dict[tuple[str, int], tuple[float, bool]] = {}
        self._lock = threading.Lock()

    def check(self, conn: Any, store: MemoryRows, terms: Sequence[str], threshold: int) -> set[str]:
        now = time.monotonic()
        common: set[str] = set()
        unknown: list[str] = []
        with self._lock:
            for term in terms:
                seen = self._seen.get((term, threshold))
                if seen is not None and now - seen[0] <= self.ttl_s:
                    if seen[1]:
                        common.add(term)
                else:
                    unknown.append(term)
        if unknown:
            found = store.common_terms(conn, unknown, threshold)
            common |= found
            with self._lock:
                if len(self._seen) > self.size:
                    self._seen.clear()
                for term in unknown:
                    self._seen[(term, threshold)] = (now, term in found)
        return common


class SpeakerNames:
    """Name tokens of each namespace's speakers ("melanie" -> "Melanie"), cached briefly."""

    def __init__(self, ttl_s: float = 10.0) -> None:
        self.ttl_s = ttl_s
        self._cache: dict[str, tuple[float, dict[str, str]]] = {}
        self._lock = threading.Lock()

    def lookup(self, conn: Any, store: MemoryRows, namespaces: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        now = time.monotonic()
        for namespace in namespaces:
            with self._lock:
                cached = self._cache.get(namespace)
            if cached is None or now - cached[0] > self.ttl_s:
                tokens: dict[str, str] = {}
                for speaker in store.speaker_names(conn, namespace):
                    for token in query_terms(speaker):
                        tokens.setdefault(token, speaker)
                cached = (now, tokens)
                with self._lock:
                    self._cache[namespace] = cached
            out.update(cached[1])
        return out

    def forget(self, namespace: str) -> None:
        with self._lock:
            self._cache.pop(namespace, None)


def _fact(record: MemoryRecord) -> RowFact:
    at = record.observed_at or record.created_at
    session = f"{record.namespace}\x00{record.session_id}" if record.session_id else None
    return RowFact(session=session, at=at.timestamp() if at else None,
                   named=names_something(record.content), speaker=record.speaker,
                   addresses=addresses_someone(record.content),
                   changes=states_change(record.content), names=named_words(record.content))


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
