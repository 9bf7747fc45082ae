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

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
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
from .store_state import StateCache

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

    def write_marker(self, conn: Connection) -> Hashable | None:
        """What changes whenever the keyword index does (None: not known)."""
        ...


# How many of the best keyword rows the "terms" coverage reads (fusion.keyword_coverage).
HELD_ROWS = 10
# The text of the rows asked (only those that exist).
Contents = Callable[[Iterable[int]], Mapping[int, str]]
# The dense side, filling ``found.dense`` (and its bounds) for the query without the name
# tokens given (empty: the query itself). The recaller's; the keyword-only path has none.
DenseSide = Callable[[Candidates, set[str]], None]


class CommonTerms:
    """Which words are too common to rank by, per threshold, remembered while the
    store's write marker stays the same (store_state.py)."""

    def __init__(self, size: int = 4096) -> None:
        self._seen: StateCache[tuple[str, int], bool] = StateCache(size)

    def check(self, conn: Connection, store: KeywordSource, terms: Sequence[str],
              threshold: int, marker: Hashable | None) -> set[str]:
        seen = self._seen.known(marker, [(t, threshold) for t in terms])
        common = {t for (t, _), is_common in seen.items() if is_common}
        unknown = [t for t in terms if (t, threshold) not in seen]
        if unknown:
            found = store.common_terms(conn, unknown, threshold)
            common |= found
            self._seen.keep(marker, {(t, threshold): t in found for t in unknown})
        return common


class SpeakerNames:
    """Name tokens of each namespace's speakers ("melanie" -> "Melanie"), remembered
    while the store's write marker stays the same (speakers are a keyword column)."""

    def __init__(self, size: int = 1024) -> None:
        self._seen: StateCache[str, dict[str, str]] = StateCache(size)

    def lookup(self, conn: Connection, store: KeywordSource, namespaces: Sequence[str],
               marker: Hashable | None) -> dict[str, str]:
        out: dict[str, str] = {}
        seen = self._seen.known(marker, namespaces)
        for namespace in namespaces:
            tokens = seen.get(namespace)
            if tokens is None:
                tokens = {}
                for speaker in store.speaker_names(conn, namespace):
                    for token in query_terms(speaker):
                        tokens.setdefault(token, speaker)
                self._seen.keep(marker, {namespace: tokens})
            out.update(tokens)
        return out

    def forget(self, namespace: str) -> None:
        self._seen.drop(namespace)


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

    def _match(self, conn: Connection, terms: list[str],
               marker: Hashable | None) -> str | None:
        return keyword_match(
            terms, self.source.size_hint(conn), self.tuning,
            lambda words, threshold: self.caches.common.check(conn, self.source, words,
                                                              threshold, marker),
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
        marker = source.write_marker(conn)  # the caches' key: what the store holds
        names = self.caches.names.lookup(conn, source, where.namespaces, marker)
        searched, named = keyword_terms(terms, names, tuning)
        match = self._match(conn, searched, marker)
        keyword = self._search(conn, match, where, depth) if match is not None else {}
        found = Candidates(keyword=keyword, dense={}, shape=query_shape(query))
        if keyword and tuning.keyword_scale != "minmax":
            idfs = self.caches.counts.idfs(conn, source, searched, marker)
            found.keyword_ideal = sum(idfs.values())
            if tuning.coverage_basis == "terms":
                found.keyword_held = self._held(conn, keyword, idfs, contents)
        if dense is not None:
            dense(found, {t for t in terms if t in names}
                  if not tuning.names_in_dense_query and named else set())
        if tuning.feedback_docs > 0:
            found.feedback = self._feedback(conn, where, found, set(terms) | set(names),
                                            contents, marker)
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
                  known: set[str], contents: Contents,
                  marker: Hashable | None) -> dict[int, float]:
        """Keyword scores for the words the best rows of both sides share (RM3-like)."""
        best: list[int] = []
        for side in (found.keyword, found.dense):
            best += sorted(side, key=lambda r: (-side[r], r))[: self.tuning.feedback_docs]
        texts = list(contents(dict.fromkeys(best)).values())
        terms = feedback_terms(texts, known, self.tuning.feedback_terms)
        match = self._match(conn, terms, marker) if terms else None
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
