"""A calibrated keyword score: a row's BM25 against the BM25 of a row stating the query.

Min-max scaling gives the best keyword match the full keyword weight however poorly it
matches: among thousands of rows that share one word each with a paraphrased question,
the one sharing two words scores 1.0 and outranks the memory the dense side found.
Dividing by the score a row holding every query word would get measures the match in
absolute terms: a row matching a fifth of the query's idf mass scores about 0.2.

FTS5's bm25 sums, per query word, idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgD));
for a row of average length holding the word once in a column of weight 1 that is the
word's idf, so the reference score is the sum of the words' idfs. The idf is FTS5's own:
log((N - n + 0.5) / (n + 0.5)), at least 1e-6, with N the rows of the whole index and n
those holding the word.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["FTS5_IDF_FLOOR", "Counts", "DocumentCounts", "ideal_score"]


class Counts(Protocol):
    """What the reference score reads: the store, or the prompt hook's read-only lookup
    (engine/storage/sqlite/lookup.py), which imports neither the store nor numpy."""

    def size_hint(self, conn: Any) -> int: ...

    def document_counts(self, conn: Any, terms: Sequence[str], cap: int) -> dict[str, int]: ...


# FTS5 clamps an idf at or below zero (a word in over half the rows) to this.
FTS5_IDF_FLOOR = 1e-6


def ideal_score(total: int, counts: Sequence[int]) -> float:
    """The bm25 of an average-length row holding each word once (the idf sum)."""
    return sum(
        max(FTS5_IDF_FLOOR, math.log((total - n + 0.5) / (n + 0.5))) for n in counts
    )


class DocumentCounts:
    """Rows holding each word, remembered for a minute: the reference score moves as
    slowly as document frequencies do, and a stale count only nudges the scale."""

    def __init__(self, ttl_s: float = 60.0, size: int = 8192) -> None:
        self.ttl_s = ttl_s
        self.size = size
        self._seen: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def ideal(self, conn: Any, store: Counts, terms: Sequence[str]) -> float:
        """The reference score of ``terms`` over the whole keyword index."""
        return sum(self.idfs(conn, store, terms).values())

    def idfs(self, conn: Any, store: Counts, terms: Sequence[str]) -> dict[str, float]:
        """FTS5's idf of each of ``terms`` over the whole keyword index."""
        total = store.size_hint(conn)
        # Past half the rows the idf is floored: counting further changes nothing.
        cap = total // 2 + 1
        now = time.monotonic()
        counts: dict[str, int] = {}
        unknown: list[str] = []
        with self._lock:
            for term in dict.fromkeys(terms):
                seen = self._seen.get(term)
                if seen is not None and now - seen[0] <= self.ttl_s:
                    counts[term] = seen[1]
                else:
                    unknown.append(term)
        if unknown:
            found = store.document_counts(conn, unknown, cap)
            counts.update(found)
            with self._lock:
                if len(self._seen) > self.size:
                    self._seen.clear()
                for term, count in found.items():
                    self._seen[term] = (now, count)
        return {t: ideal_score(total, [n]) for t, n in counts.items()}
