"""The keyword query of a big store: which words count as common, at any size."""

from __future__ import annotations

from collections.abc import Sequence

from aide_memoire.engine.recall.fusion import RecallTuning
from aide_memoire.engine.recall.keyword_query import keyword_match


def _threshold_at(size: int) -> int:
    """The row count above which keyword_match treats a word as common, at ``size``."""
    asked: list[int] = []

    def common(words: Sequence[str], threshold: int) -> set[str]:
        asked.append(threshold)
        return set()

    keyword_match(["lighthouse", "keeper"], size, RecallTuning(), common)
    return asked[0]


def test_a_rare_word_stays_rare_in_a_million_rows() -> None:
    tuning = RecallTuning()
    # 1% of the store, rounded, from the floor up to the cap; never more than the cap.
    assert _threshold_at(100_000) == tuning.common_floor
    assert _threshold_at(300_000) == 3000
    assert _threshold_at(1_000_000) == tuning.common_cap == 5000
    assert _threshold_at(10_000_000) == tuning.common_cap


def test_common_words_only_count_together() -> None:
    def common(words: Sequence[str], threshold: int) -> set[str]:
        return {"deploy", "report"}

    query = keyword_match(["deploy", "report", "rollback"], 1_000_000, RecallTuning(), common)
    assert query is not None and "rollback" in query and "AND" in query
