"""Which words recall's keyword side searches, and as what FTS5 query.

Pure functions, shared by the recaller and by the prompt hook's read-only keyword path
(hooks/cold.py), which must ask FTS5 exactly what recall asks without importing it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..core.text import fts_query
from .fusion import RecallTuning

__all__ = ["keyword_match", "keyword_terms"]


def keyword_terms(
    terms: Sequence[str], names: Mapping[str, str], tuning: RecallTuning
) -> tuple[list[str], set[str]]:
    """(the words the keyword query searches, the speakers the query names).

    ``names`` maps a speaker's name tokens to the speaker. A speaker's name matches nearly
    every turn of their conversation, so unless ``names_in_keyword_query`` it leaves the
    keyword query (the speaker boost of fusion handles it), except when it is all there is.
    """
    named = {names[t] for t in terms if t in names}
    found = list(terms)
    if not tuning.names_in_keyword_query and named:
        found = [t for t in terms if t not in names] or list(terms)
    return found, named


def keyword_match(
    terms: Sequence[str],
    size: int,
    tuning: RecallTuning,
    common: Callable[[Sequence[str], int], set[str]],
) -> str | None:
    """The FTS5 query: an OR of the words; in a big store, the very common ones only
    together.

    FTS5 computes bm25 for every row that matches, so a word found in thousands of rows
    costs as much as the store is large, while such a word alone says little. In a store
    of more than ``prune_above`` rows (``size``, an upper bound), words in more than the
    common threshold of rows (``common(terms, threshold)`` says which) leave the OR; when
    two or more of them are asked, they come back as one alternative that needs them all
    ("(a AND b)": cheap to evaluate, and the rows it finds score on every word). A query
    of common words only keeps them all that way, or its one word.
    """
    words = list(terms)
    if len(words) < 2 or size <= tuning.prune_above:
        return fts_query(words)
    # Rounded so that cached answers survive a few writes.
    threshold = max(tuning.common_floor,
                    min(tuning.common_cap, int(tuning.common_share * size) // 1000 * 1000))
    found = common(words, threshold)
    rare = [t for t in words if t not in found]
    often = [t for t in words if t in found]
    if len(often) == 1:
        # One common word beside rarer ones adds little; alone, it is the query.
        return fts_query(rare or often)
    return fts_query(rare, all_of=often)
