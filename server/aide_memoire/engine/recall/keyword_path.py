"""Recall's keyword side and every stage after fusion, written once.

The recaller runs this path with its dense side plugged in
(``KeywordPath.candidates(dense=...)``, then ``rank``); the prompt hook's read-only answer
(hooks/cold.py), which must not import numpy, pydantic or the store, runs it with none
(``KeywordPath.recall``, the keyword-only path as one call). Both therefore ask FTS5
the same query, scale it the same way and apply the same stages in the same order: a
stage added here reaches both, and one added anywhere else reaches neither.

The order: the query's words and the speakers it names (keyword_query.py), the FTS5
query and search, the keyword side's reference score (calibrate.py), the dense side
(the recaller's, when given), feedback words, the named speaker's rows; then fusion and
the stages (``KeywordPath.rank``). Re-ranking and the engine's adjusters come after, in the caller.
Standard library only, beside the engine's light pure modules.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from ..core.kinds import only_adds
from ..core.text import (
    addresses_someone,
    content_words,
    feedback_terms,
    named_words,
    names_something,
    query_shape,
    query_terms,
    states_change,
)
from ..storage.filter import RowFilter
from ..storage.protocol import Connection
from .calibrate import DocumentCounts
from .fusion import Candidates, RecallTuning, fuse, prefer_timed
from .held import held_share
from .keyword_query import keyword_match, keyword_terms
from .stages import (
    RowFact,
    RowFacts,
    bridge_names,
    lift_addressed,
    lift_sessions,
    prefer_current,
    prefer_dated,
    prefer_latest,
    prefer_named,
    prefer_recent,
    prefer_restated,
)

__all__ = ["CommonTerms", "Contents", "DenseSide", "KeywordCaches", "KeywordPath",
           "KeywordSource", "SpeakerNames", "row_fact"]


class KeywordSource(Protocol):
    """The reads this path makes: the store's (MemoryRows), or the prompt hook's
    read-only lookup (engine/storage/sqlite/lookup.py)."""

    def size_hint(self, conn: Connection) -> int: ...

    def document_counts(self, conn: Connection, terms: Sequence[str],
                        cap: int) -> dict[str, int]: ...

    def common_terms(self, conn: Connection, terms: Sequence[str], threshold: int) -> set[str]: ...

    def keyword_search(self, conn: Connection, match: str, where: RowFilter, limit: int,
                       weights: Sequence[float]) -> list[tuple[int, float]]: ...

    def speakers(self, conn: Connection, rowids: Iterable[int]) -> dict[int, str]: ...

    def speaker_names(self, conn: Connection, namespace: str) -> list[str]: ...


# How many of the best keyword rows the "terms" coverage reads (fusion.keyword_coverage).
HELD_ROWS = 10
# The text of the rows asked (only those that exist).
Contents = Callable[[Iterable[int]], Mapping[int, str]]
# The dense side, filling ``found.dense`` (and its bounds) for the query without the name
# tokens given (empty: the query itself). The recaller's; the keyword-only path has none.
DenseSide = Callable[[Candidates, set[str]], None]


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

    def check(self, conn: Connection, store: KeywordSource, terms: Sequence[str],
              threshold: int) -> set[str]:
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

    def lookup(self, conn: Connection, store: KeywordSource,
               namespaces: Sequence[str]) -> dict[str, str]:
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


class KeywordCaches:
    """What the path remembers between queries (a long-lived recaller gains from it; a
    one-prompt process just holds it)."""

    def __init__(self) -> None:
        self.names = SpeakerNames()
        self.common = CommonTerms()
        self.counts = DocumentCounts()


@dataclass(frozen=True)
class KeywordPath:
    """The path over one source, with the recall constants and FTS5 column weights (in
    the index's column order) it runs with."""

    source: KeywordSource
    tuning: RecallTuning
    weights: Sequence[float]
    caches: KeywordCaches

    def _match(self, conn: Connection, terms: list[str]) -> str | None:
        return keyword_match(
            terms, self.source.size_hint(conn), self.tuning,
            lambda words, threshold: self.caches.common.check(conn, self.source, words,
                                                              threshold),
        )

    def _search(self, conn: Connection, match: str, where: RowFilter,
                depth: int) -> dict[int, float]:
        return dict(self.source.keyword_search(
            conn, match, where, max(self.tuning.keyword_depth, depth), self.weights))

    def candidates(self, conn: Connection, query: str, where: RowFilter, limit: int,
                   contents: Contents, dense: DenseSide | None = None) -> Candidates:
        """Every retriever's scores for ``query``, before fusion (see fusion.fuse)."""
        source, tuning = self.source, self.tuning
        depth = max(tuning.depth, limit)
        terms = query_terms(query)
        names = self.caches.names.lookup(conn, source, where.namespaces)
        searched, named = keyword_terms(terms, names, tuning)
        match = self._match(conn, searched)
        keyword = self._search(conn, match, where, depth) if match is not None else {}
        found = Candidates(keyword=keyword, dense={}, shape=query_shape(query))
        if keyword and tuning.keyword_scale != "minmax":
            idfs = self.caches.counts.idfs(conn, source, searched)
            found.keyword_ideal = sum(idfs.values())
            if tuning.coverage_basis == "terms":
                found.keyword_held = self._held(conn, keyword, idfs, contents)
        if dense is not None:
            dense(found, {t for t in terms if t in names}
                  if not tuning.names_in_dense_query and named else set())
        if tuning.feedback_docs > 0:
            found.feedback = self._feedback(conn, where, found, set(terms) | set(names),
                                            contents)
        if len(named) == 1:
            (who,) = named
            found.speaker_rows = {
                rowid for rowid, name in source.speakers(conn, found.rows()).items()
                if name == who
            }
        return found

    def _held(self, conn: Connection, keyword: Mapping[int, float],
              idfs: Mapping[str, float], contents: Contents) -> float:
        """The share of the query's idf mass one of the best keyword rows holds (held.py)."""
        best = sorted(keyword, key=lambda r: (-keyword[r], r))[:HELD_ROWS]
        speakers = self.source.speakers(conn, best)
        texts = contents(best)
        return held_share(idfs, [f"{texts.get(r, '')} {speakers.get(r, '')}" for r in best])

    def _feedback(self, conn: Connection, where: RowFilter, found: Candidates,
                  known: set[str], contents: Contents) -> dict[int, float]:
        """Keyword scores for the words the best rows of both sides share (RM3-like)."""
        best: list[int] = []
        for side in (found.keyword, found.dense):
            best += sorted(side, key=lambda r: (-side[r], r))[: self.tuning.feedback_docs]
        texts = list(contents(dict.fromkeys(best)).values())
        terms = feedback_terms(texts, known, self.tuning.feedback_terms)
        match = self._match(conn, terms) if terms else None
        return self._search(conn, match, where, self.tuning.depth) if match else {}

    def rank(self, found: Candidates, contents: Contents, facts: RowFacts,
             query: str = "") -> dict[int, float]:
        """Fusion, then every stage after it, in order: one score per candidate (``query``:
        the question's text, read by the time and name-bridge stages)."""
        tuning = self.tuning
        fused = prefer_timed(fuse(found, tuning), found.shape, tuning, contents)
        fused = lift_sessions(fused, facts, tuning)
        fused = prefer_dated(fused, query, facts, tuning)
        fused = bridge_names(fused, set(query_terms(query)), facts, tuning)
        fused = lift_addressed(fused, found.speaker_rows, facts, tuning)
        if found.dense_live:
            # Chosen on hybrid recall only (issue 31): keyword-only recall, which the
            # prompt hook's keyword path shares, is left as measured.
            fused = prefer_named(fused, found.shape, facts, tuning)
        fused = prefer_recent(fused, found.shape, facts, tuning)
        fused = prefer_restated(fused, found.shape, found.speaker_rows, facts, tuning)
        fused = prefer_current(fused, found.shape, found.speaker_rows, facts, tuning)
        return prefer_latest(fused, found.shape, query, found.speaker_rows, facts, tuning)

    def recall(self, conn: Connection, query: str, where: RowFilter, limit: int,
               contents: Contents, facts: RowFacts) -> tuple[Candidates, dict[int, float]]:
        """Recall with no dense side, up to the caller's re-ranker and adjusters: the
        candidates and their ranked scores (empty when nothing matched)."""
        found = self.candidates(conn, query, where, limit, contents)
        if not found.keyword:
            return found, {}
        return found, self.rank(found, contents, facts, query)


def row_fact(namespace: str, session_id: str | None, at: datetime | None, content: str,
             speaker: str | None) -> RowFact:
    """What the stages read of one row (``at``: its observed time, else created)."""
    return RowFact(session=f"{namespace}\x00{session_id}" if session_id else None,
                   at=at.timestamp() if at else None, named=names_something(content),
                   speaker=speaker, addresses=addresses_someone(content),
                   changes=states_change(content), names=named_words(content),
                   words=content_words(content), adds=only_adds(content),
                   said=" ".join(content.casefold().split()))
