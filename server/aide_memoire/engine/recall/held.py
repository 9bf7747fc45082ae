"""How much of a query the best keyword rows hold: a coverage that the store does not move.

Query-adaptive fusion scales the keyword weight by the keyword side's coverage of the
query. Measured as the best row's bm25 over an ideal row's (calibrate.py), it depends on
what else the namespace holds: every idf gains log N in a bigger store, and FTS5's length
normalisation divides by the average column lengths of all the rows, so a conversation's
turn reaches a smaller share of the ideal among 100k notes than alone (docs/benchmarks.md,
issue 28 round 9). Here the coverage is the share of the query words' idf mass that one
row's own text (its content and speaker) holds, the largest over the best keyword rows:
which words a row holds does not change with the store, and no length enters it.

Words are compared as FTS5 indexes them: both sides go through a private in-memory FTS5
table with the store's own tokenizer (storage/stems.py), so "joined" holds "join"
exactly when the keyword search would match it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..storage.stems import stems

__all__ = ["held_share"]


def held_share(idfs: Mapping[str, float], texts: Sequence[str]) -> float:
    """The largest share of the words' idf mass (``idfs``: query word -> idf) that one of
    ``texts`` holds every token of; 0.0 for no text, 1.0 for no idf mass."""
    total = sum(idfs.values())
    if total <= 0:
        return 1.0
    words = list(idfs)
    tokens = stems([*words, *texts])
    word_tokens, text_tokens = tokens[: len(words)], tokens[len(words):]
    best = 0.0
    for held in text_tokens:
        mass = sum(idfs[w] for w, need in zip(words, word_tokens, strict=True)
                   if need and need <= held)
        best = max(best, mass / total)
    return best
