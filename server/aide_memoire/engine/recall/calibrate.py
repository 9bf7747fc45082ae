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
from collections.abc import Hashable, Sequence
from typing import Any, Protocol

from .store_state import StateCache

__all__ = ["FTS5_IDF_FLOOR", "Counts", "DocumentCounts", "ideal_score"]


class Counts(Protocol):
    """What the reference score reads: the store, or the prompt hook's read-only lookup
    (engine/storage/sqlite/lookup.py), which imports neither the store nor numpy."""

    def size_hint(self, conn: Any) -> int: ...

    def document_counts(self, conn: Any, terms: Sequence[str], cap: int) -> dict[str, int]: ...

    def write_marker(self, conn: Any) -> Hashable | None:
        """What changes whenever the keyword index does (None: not known)."""
        ...


# FTS5 clamps an idf at or below zero (a word in over half the rows) to this.
FTS5_IDF_FLOOR = 1e-6


def ideal_score(total: int, counts: Sequence[int]) -> float:
    """The bm25 of an average-length row holding each word once (the idf sum)."""
    return sum(
        max(FTS5_IDF_FLOOR, math.log((total - n + 0.5) / (n + 0.5))) for n in counts
    )


class DocumentCounts:
    """Rows holding each word, remembered while the store's write marker stays the same
    (store_state.py): the reference score is a function of what the store holds."""

    def __init__(self, size: int = 8192) -> None:
        self._seen: StateCache[str, int] = StateCache(size)

    def ideal(self, conn: Any, store: Counts, terms: Sequence[str],
              marker: Hashable | None) -> float:
        """The reference score of ``terms`` over the whole keyword index."""
        return sum(self.idfs(conn, store, terms, marker).values())

    def idfs(self, conn: Any, store: Counts, terms: Sequence[str],
             marker: Hashable | None) -> dict[str, float]:
        """FTS5's idf of each of ``terms`` over the whole keyword index, ``marker`` the
        store's write marker read before (``store.write_marker``)."""
        total = store.size_hint(conn)
        # Past half the rows the idf is floored: counting further changes nothing.
        cap = total // 2 + 1
        wanted = list(dict.fromkeys(terms))
        counts = self._seen.known(marker, wanted)
        unknown = [t for t in wanted if t not in counts]
        if unknown:
            found = store.document_counts(conn, unknown, cap)
            counts.update(found)
            self._seen.keep(marker, found)
        return {t: ideal_score(total, [n]) for t, n in counts.items()}
