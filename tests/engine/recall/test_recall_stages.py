"""The stages after fusion (engine/recall/stages.py) and query-adaptive fusion: pure functions
checked on small score sets, then the recency stage through a real store. Questions are
written from classes (attribute questions in the present, about the past, asking for a
series), not taken from a benchmark."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.core.text import QueryShape, names_something, query_shape
from aide_memoire.engine.recall.fusion import Candidates, RecallTuning, keyword_weight
from aide_memoire.engine.recall.stages import (
    RowFact,
    lift_addressed,
    lift_sessions,
    prefer_named,
    prefer_recent,
)

PRESENT = [
    "Where does Odile work?",
    "Which city is Bastien living in?",
    "What is Ruth's role?",
    "Who is Amadou with?",
    "What tool does the platform team use?",
    "What does Keziah do for exercise?",
    "Which company is Lorenz at?",
]
NOT_PRESENT = [
    "Where did Odile work before?",  # the past
    "When did Bastien move?",  # about time
    "Where has Ruth travelled?",  # present perfect: a series
    "What pets does Amadou have?",  # a plural object: a series
    "Who are Keziah's friends?",
    "What are Lorenz's hobbies?",
    "Does Odile speak Dutch?",  # yes/no
    "What was Ruth's first job?",
]


@pytest.mark.parametrize("question", PRESENT)
def test_present_tense_attribute_questions_are_recognised(question: str) -> None:
    assert query_shape(question).present


@pytest.mark.parametrize("question", NOT_PRESENT)
def test_past_series_and_yes_no_questions_are_not_present(question: str) -> None:
    assert not query_shape(question).present


def _facts(table: dict[int, RowFact]):  # type: ignore[no-untyped-def]
    return lambda rows: {r: table[r] for r in rows if r in table}


def test_prefer_recent_puts_the_later_of_two_close_candidates_first() -> None:
    fused = {1: 0.80, 2: 0.75, 3: 0.30}
    facts = _facts({1: RowFact("a", 1_000.0), 2: RowFact("b", 9_000.0),
                    3: RowFact("b", 5_000.0)})
    tuning = RecallTuning(recency_weight=0.1)
    out = prefer_recent(fused, QueryShape(present=True), facts, tuning)
    assert max(out, key=lambda r: out[r]) == 2
    assert out[1] == fused[1]  # the earliest gains nothing
    assert out[3] == pytest.approx(0.30 + 0.1 * 0.5)  # halfway in time, half the weight


def test_prefer_recent_leaves_other_questions_and_weight_zero_alone() -> None:
    fused = {1: 0.80, 2: 0.75}
    facts = _facts({1: RowFact("a", 1_000.0), 2: RowFact("b", 9_000.0)})
    assert prefer_recent(fused, QueryShape(), facts, RecallTuning(recency_weight=0.1)) == fused
    assert prefer_recent(fused, QueryShape(present=True), facts,
                         RecallTuning(recency_weight=0.0)) == fused


def test_prefer_recent_needs_two_distinct_times() -> None:
    fused = {1: 0.80, 2: 0.75}
    same = _facts({1: RowFact("a", 5.0), 2: RowFact("b", 5.0)})
    assert prefer_recent(fused, QueryShape(present=True), same,
                         RecallTuning(recency_weight=0.5)) == fused


def test_prefer_recent_only_reorders_the_leading_candidates() -> None:
    fused = {r: 1.0 - r / 100 for r in range(1, 31)}
    facts = _facts({r: RowFact(None, float(r)) for r in range(1, 31)})
    out = prefer_recent(fused, QueryShape(present=True), facts,
                        RecallTuning(recency_weight=0.5, recency_depth=10))
    assert all(out[r] == fused[r] for r in range(11, 31))


def test_lift_sessions_raises_a_turn_of_the_strong_session() -> None:
    # Rows 2 and 3 share a session with the best row; row 4 is alone in its session.
    fused = {1: 0.9, 2: 0.5, 3: 0.6, 4: 0.52}
    facts = _facts({1: RowFact("s1", 1.0), 2: RowFact("s1", 2.0), 3: RowFact("s2", 3.0),
                    4: RowFact("s3", 4.0)})
    out = lift_sessions(fused, facts, RecallTuning(session_weight=0.1, session_top=2))
    assert out[2] > out[4]  # fused had 4 above 2
    assert out[1] - fused[1] == pytest.approx(0.1)  # the best session gains the full weight


def test_lift_sessions_off_and_with_one_session() -> None:
    fused = {1: 0.9, 2: 0.5}
    one = _facts({1: RowFact("s1", 1.0), 2: RowFact("s1", 2.0)})
    assert lift_sessions(fused, one, RecallTuning(session_weight=0.2)) == fused
    two = _facts({1: RowFact("s1", 1.0), 2: RowFact("s2", 2.0)})
    assert lift_sessions(fused, two, RecallTuning(session_weight=0.0)) == fused


def test_adaptive_keyword_weight_follows_how_much_of_the_query_a_row_holds() -> None:
    found = Candidates(keyword={1: 2.0, 2: 1.0}, dense={1: 0.5}, dense_live=True,
                       keyword_ideal=8.0)
    fixed = RecallTuning(keyword_weight=0.5, adaptive_keyword=0.0)
    assert keyword_weight(found, fixed) == 0.5
    # On by default (issue 31): full weight from half the ideal bm25.
    assert keyword_weight(found, RecallTuning(keyword_weight=0.5)) == pytest.approx(0.25)
    adaptive = replace(fixed, adaptive_keyword=1.0)
    assert keyword_weight(found, adaptive) == pytest.approx(0.5 * 2.0 / 8.0)
    half = replace(fixed, adaptive_keyword=0.5)  # full weight from half the ideal on
    assert keyword_weight(found, half) == pytest.approx(0.5 * 2.0 / 4.0)
    found.keyword_ideal = 1.0  # a row holds every word (capped at the full weight)
    assert keyword_weight(found, adaptive) == 0.5
    found.shape = QueryShape(identifier=True)  # identifiers keep their own weight
    assert keyword_weight(found, adaptive) == adaptive.identifier_keyword_weight


def test_recency_stage_in_a_real_store(tmp_path: Path) -> None:
    """Two sessions months apart: now, the later statement first; as of a day between,
    the earlier; a question for a series is ordered as without the stage."""
    with Memory(settings=Settings(home=tmp_path, extract_facts=False)) as memory:
        recaller = memory.internals.recaller
        recaller.tuning = replace(recaller.tuning, recency_weight=0.3)
        ns = "chat:stages"
        (old, pet1) = memory.store_conversation(
            [{"speaker": "Odile", "content": "I work at Halden Foods in the packing hall."},
             {"speaker": "Odile", "content": "We have a dog called Biscuit."}],
            namespace=ns, session_id="s1", observed_at="2024-01-10T10:00:00Z")
        (new, pet2) = memory.store_conversation(
            [{"speaker": "Odile", "content": "I work at Marlow Insurance in the claims team."},
             {"speaker": "Odile", "content": "We adopted a cat as well, Mochi."}],
            namespace=ns, session_id="s2", observed_at="2024-08-10T10:00:00Z")
        now = memory.recall("Where does Odile work?", namespace=ns, limit=4)
        assert now[0].id == new
        then = memory.recall("Where does Odile work?", namespace=ns, limit=4,
                             as_of="2024-04-01T00:00:00Z")
        assert then[0].id == old
        with_stage = [h.id for h in memory.recall("What pets does Odile have?",
                                                  namespace=ns, limit=4)]
        recaller.tuning = replace(recaller.tuning, recency_weight=0.0)
        without = [h.id for h in memory.recall("What pets does Odile have?",
                                               namespace=ns, limit=4)]
        assert with_stage == without
        assert {pet1, pet2} <= set(with_stage)


def test_prefer_named_lifts_turns_that_name_something_for_name_questions() -> None:
    fused = {1: 0.70, 2: 0.65, 3: 0.60}  # 1: small talk, 2: names a company, 3: a note
    facts = _facts({1: RowFact("s1", 1.0, named=False, speaker="Odile"),
                    2: RowFact("s1", 2.0, named=True, speaker="Odile"),
                    3: RowFact(None, 3.0, named=True)})
    tuning = RecallTuning(named_weight=0.1)
    out = prefer_named(fused, query_shape("Which company is Odile at?"), facts, tuning)
    assert out[2] > out[1]
    assert out[3] == fused[3]  # notes are not told apart from small talk: unchanged
    assert prefer_named(fused, query_shape("What is Odile's mood?"), facts, tuning) == fused


def test_lift_addressed_lifts_what_others_say_to_the_named_speaker() -> None:
    fused = {1: 0.70, 2: 0.65, 3: 0.60}
    facts = _facts({1: RowFact("s", 1.0, speaker="Odile"),
                    2: RowFact("s", 2.0, speaker="Bram", addresses=True),
                    3: RowFact("s", 3.0, speaker="Bram", addresses=False)})
    out = lift_addressed(fused, {1}, facts, RecallTuning(addressed_weight=0.1))
    assert out[2] == pytest.approx(0.75) and out[1] == 0.70 and out[3] == 0.60
    assert lift_addressed(fused, set(), facts, RecallTuning(addressed_weight=0.1)) == fused


@pytest.mark.parametrize(("text", "named"), [
    ("Anyway, how are you doing?", False),
    ("I work at Marlow Insurance.", True),
    ("We moved in 2021.", True),
    ("I'm a charge nurse.", False),
    ("Oh no! Sam said so.", False),  # a capital opening a sentence is not a name
])
def test_names_something(text: str, named: bool) -> None:
    assert names_something(text) is named
