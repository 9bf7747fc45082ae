"""The calibrated keyword score (engine/recall/calibrate.py): a keyword match counts for how
much of the query it matches, not for being the best of a poor lot.

Built from classes: a memory stated in one set of words and asked in another, hidden
among distractors that each hold one or two of the question's words in unrelated
sentences, so that every keyword match is partial and none is about the question.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from aide_memoire import InvalidInput, Memory, Settings
from aide_memoire.engine.core.text import query_terms
from aide_memoire.engine.recall.calibrate import ideal_score
from aide_memoire.engine.recall.fusion import Candidates, RecallTuning, keyword_scores
from aide_memoire.engine.recall.recaller import RecallRequest
from aide_memoire.engine.storage.store import RowFilter

# The calibrated keyword side as cross-validation chose it on LOCOMO (off by default).
CALIBRATED: dict[str, Any] = {"keyword_scale": "scaled", "keyword_weight": 0.55}

# (stated, asked in other words): causes, owners, decisions, locations, settings.
PARAPHRASES = [
    ("The build server ran out of disk space because old Docker images were never pruned",
     "why did the CI machine fill up its storage"),
    ("Maria answers payroll questions for the Berlin office",
     "who should I ask about salary payments in Germany"),
    ("We chose Postgres over Mongo because we need transactions spanning several tables",
     "reason for picking a relational database instead of a document store"),
    ("The office wifi password is printed under the coffee machine",
     "how do I get onto the wireless network at work"),
    ("Requests slower than two seconds are cut off by the load balancer",
     "what timeout does the traffic distributor apply to long calls"),
]
# Long sentences about something else, each holding one of the question's words.
FRAMES = [
    "At the {topic} Tom spilled lemonade near the {a} and the band played until midnight.",
    "Photos from the {topic}: kids on the lawn, a dog chasing pigeons, a {a} by the gate.",
    "The {topic} needs volunteers for the raffle; bring a {a} if you have one.",
    "Grandma's recipe for plum cake came up at the {topic}, along with a {a} story.",
]
TOPICS = ["garden party", "quarterly offsite", "charity run", "office move", "book club",
          "hackathon", "summer picnic", "board meeting", "choir rehearsal", "film night"]


def _distractors(query: str, count: int) -> list[str]:
    words = query_terms(query)
    cycle = itertools.cycle(words)
    return [FRAMES[i % len(FRAMES)].format(a=next(cycle), topic=TOPICS[i % len(TOPICS)])
            for i in range(count)]


@pytest.fixture(scope="module")
def scattered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Memory, dict[str, str]]:
    memory = Memory(tmp_path_factory.mktemp("calibration"))
    assert memory.internals.embedder.wait(), memory.internals.embedder.error
    memory.internals.recaller.tuning = replace(memory.internals.recaller.tuning, **CALIBRATED)
    targets = {}
    for number, (stated, asked) in enumerate(PARAPHRASES):
        ns = f"case{number}"
        memory.store_many([{"content": text} for text in _distractors(asked, 120)], namespace=ns)
        targets[asked] = memory.store(stated, namespace=ns)
    return memory, targets


@pytest.mark.parametrize("scale", ["scaled", "ideal"])
@pytest.mark.parametrize("case", range(len(PARAPHRASES)))
def test_meaning_beats_scattered_keywords(
    scattered: tuple[Memory, dict[str, str]], case: int, scale: str
) -> None:
    memory, targets = scattered
    asked = PARAPHRASES[case][1]
    recaller = memory.internals.recaller
    calibrated = recaller.tuning
    recaller.tuning = replace(calibrated, keyword_scale=scale)
    try:
        hits = memory.recall(asked, namespace=f"case{case}", limit=5)
    finally:
        recaller.tuning = calibrated
    assert hits[0].id == targets[asked]
    assert hits[0].ranks.get("dense") == 1
    # The distractors did match on words: the keyword side had candidates to offer.
    assert all("bm25" in hit.ranks for hit in hits[1:])


@pytest.mark.parametrize("weight", [RecallTuning().keyword_weight, 0.55])
def test_min_max_scaling_lets_partial_matches_win(
    scattered: tuple[Memory, dict[str, str]], weight: float
) -> None:
    """The failure the calibration removes: under min-max, the best partial match gets
    the whole keyword weight and a distractor comes first in most cases (the engine's
    default scale, at the keyword weight of either the default or the calibrated side)."""
    memory, targets = scattered
    recaller = memory.internals.recaller
    before = recaller.tuning
    recaller.tuning = replace(before, keyword_scale="minmax", keyword_weight=weight)
    try:
        wrong = sum(
            memory.recall(asked, namespace=f"case{n}", limit=1)[0].id != targets[asked]
            for n, (_stated, asked) in enumerate(PARAPHRASES)
        )
    finally:
        recaller.tuning = before
    assert wrong >= len(PARAPHRASES) // 2 + 1


def test_ideal_score_is_the_bm25_of_a_row_holding_every_word(tmp_path: Path) -> None:
    """Rows of one length (five words, the last one distinct): a row holding each query
    word once scores the idf sum, over the whole index."""
    settings = Settings(home=tmp_path, embedding_model="none", extract_facts=False)
    with Memory(settings=settings) as memory:
        fillers = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
        rows = [" ".join(fillers[(i + k) % 8] for k in range(4)) + f" n{i}" for i in range(40)]
        rows += [f"kiwi {fillers[i % 8]} {fillers[(i + 1) % 8]} mango k{i}" for i in range(6)]
        memory.store_many([{"content": text} for text in rows], namespace="n")
        memory.store_many([{"content": text} for text in rows[:5]], namespace="other")
        full = memory.store("kiwi mango papaya quince z", namespace="n")
        assert sum(memory.status().namespaces.values()) == 52
        recaller = memory.internals.recaller
        recaller.tuning = replace(recaller.tuning, keyword_scale="ideal")  # computes it
        with memory.internals.db.read() as conn:
            found = recaller.candidates(conn, RecallRequest(
                query="kiwi mango papaya quince", where=RowFilter(namespaces=["n"]), limit=5))
            (rowid,) = conn.execute("SELECT rowid FROM memories WHERE id = ?", (full,)).fetchone()
        # N counts every namespace (FTS5's idf is index-wide): 40 + 6 + 5 + 1.
        expected = ideal_score(52, [7, 7, 1, 1])
        assert math.isclose(found.keyword_ideal, expected, rel_tol=1e-9)
        # Every row holds four words, so the full row is of average length.
        assert math.isclose(found.keyword[rowid], expected, rel_tol=0.05)
        scores = keyword_scores(found, "ideal")
        assert scores[rowid] == pytest.approx(1.0, abs=0.05)
        partial = [r for r in found.keyword if r != rowid]
        # A row holding the two common words scores their share of the idf mass.
        share = ideal_score(52, [7, 7]) / expected
        assert partial and all(scores[r] == pytest.approx(share, rel=0.05) for r in partial)
        assert share < 0.5


def test_scales_on_candidates() -> None:
    found = Candidates(keyword={1: 2.0, 2: 1.0}, dense={}, keyword_ideal=8.0)
    assert keyword_scores(found, "minmax") == {1: 1.0, 2: 0.0}
    assert keyword_scores(found, "ideal") == {1: 0.25, 2: 0.125}
    assert keyword_scores(found, "scaled") == {1: 0.25, 2: 0.0}
    # Without a reference score every scale falls back to min-max.
    assert keyword_scores(replace(found, keyword_ideal=0.0), "ideal") == {1: 1.0, 2: 0.0}
    with pytest.raises(InvalidInput, match="keyword scale"):
        keyword_scores(found, "zscore")
