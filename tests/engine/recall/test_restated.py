"""The restatement stage (stages.prefer_restated), the change and name readers it uses,
and a query's speaker names left out of the dense query (recaller.without_names). Turns
are written from classes (a change said plainly, in passing, by the other speaker, as a
reply; a series that only adds; small talk), not taken from a benchmark."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.core.text import named_words, query_shape, states_change
from aide_memoire.engine.recall.fusion import RecallTuning
from aide_memoire.engine.recall.recaller import without_names
from aide_memoire.engine.recall.stages import RowFact, RowFacts, prefer_restated

PRESENT = query_shape("Where does Odile work?")


def _facts(table: dict[int, RowFact]) -> RowFacts:
    return lambda rows: {r: table[r] for r in rows if r in table}


@pytest.mark.parametrize("text", [
    "I work at Marlow Insurance now.",
    "Not anymore, I'm team lead since the reshuffle.",
    "Since we migrated from Jenkins to GitLab CI the builds are calm.",
    "These days my thing is climbing, I gave up running.",
    "We switched to Figma over the summer.",
    "I'm single again.",
])
def test_statements_of_change(text: str) -> None:
    assert states_change(text)


@pytest.mark.parametrize("text", [
    "I work at Marlow Insurance in the claims team.",
    "We adopted a cat as well, Mochi.",
    "Haha, that sounds about right.",
    "Our flat in Lyon is tiny but I love it.",
])
def test_statements_without_change(text: str) -> None:
    assert not states_change(text)


def test_named_words_are_the_names_inside_a_sentence() -> None:
    assert named_words("So how is Nordwind Logistics? A change after Brightleaf.") == {
        "nordwind", "logistics", "brightleaf"}  # "A" and "So" open sentences
    assert named_words("we moved in 2021") == frozenset()


def test_the_newer_restatement_goes_first() -> None:
    # 1: the old statement (session 1); 2: small talk by the subject in session 2;
    # 3: the change, said in passing (shares the old value's name).
    fused = {1: 0.9, 2: 0.8, 3: 0.7}
    facts = _facts({
        1: RowFact("s1", 1.0, speaker="Odile", names=frozenset({"marlow"})),
        2: RowFact("s2", 5.0, speaker="Odile"),
        3: RowFact("s2", 6.0, speaker="Odile", names=frozenset({"marlow", "halden"})),
    })
    out = prefer_restated(fused, PRESENT, {1, 2, 3}, facts, RecallTuning(restated_depth=5))
    assert max(out, key=lambda r: out[r]) == 3
    assert out[1] == fused[1] and out[2] == fused[2]  # nothing else moves
    assert out[3] > out[1]


def test_what_the_other_speaker_says_to_the_subject_counts() -> None:
    fused = {1: 0.9, 2: 0.5}
    facts = _facts({
        1: RowFact("s1", 1.0, speaker="Odile", names=frozenset({"marlow"})),
        2: RowFact("s2", 6.0, speaker="Bram", addresses=True,
                   names=frozenset({"marlow", "halden"})),
    })
    out = prefer_restated(fused, PRESENT, {1}, facts, RecallTuning(restated_depth=5))
    assert out[2] > out[1]
    # The same turn not spoken to anyone is about Bram, not Odile: nothing moves.
    facts2 = _facts({1: facts([1])[1], 2: replace(facts([2])[2], addresses=False)})
    assert prefer_restated(fused, PRESENT, {1}, facts2, RecallTuning(restated_depth=5)) == fused


def test_no_pair_no_change() -> None:
    fused = {1: 0.9, 2: 0.8}
    unrelated = _facts({1: RowFact("s1", 1.0, names=frozenset({"marlow"})),
                        2: RowFact("s2", 6.0, names=frozenset({"lyon"}))})
    tuning = RecallTuning(restated_depth=5)
    assert prefer_restated(fused, PRESENT, set(), unrelated, tuning) == fused
    same_session = _facts({1: RowFact("s1", 1.0), 2: RowFact("s1", 6.0, changes=True)})
    assert prefer_restated(fused, PRESENT, set(), same_session, tuning) == fused
    changed = _facts({1: RowFact("s1", 1.0), 2: RowFact("s2", 6.0, changes=True)})
    assert prefer_restated(fused, query_shape("What pets does Odile have?"), set(), changed,
                           tuning) == fused  # a series: not present-tense
    assert prefer_restated(fused, PRESENT, set(), changed, RecallTuning()) == fused  # off
    assert max(prefer_restated(fused, PRESENT, set(), changed, tuning).items(),
               key=lambda kv: kv[1])[0] == 2


def test_only_the_leading_candidates_pair() -> None:
    fused = {r: 1.0 - r / 100 for r in range(1, 21)}
    table = {r: RowFact("s1", float(r)) for r in range(1, 20)}
    table[20] = RowFact("s2", 99.0, changes=True)  # a change, but ranked 20th
    out = prefer_restated(fused, PRESENT, set(), _facts(table), RecallTuning(restated_depth=5))
    assert out == fused


@pytest.mark.parametrize(("query", "names", "expected"), [
    ("Which company is Oskar at?", {"oskar"}, "Which company is at?"),
    ("What is Oskar's relationship status?", {"oskar"}, "What is relationship status?"),
    ("What's Oskar’s role?", {"oskar"}, "What's role?"),
    ("Oskar?", {"oskar"}, "Oskar?"),  # nothing else: the query as it was
    ("What does Ana Lima do?", {"ana", "lima"}, "What does do?"),
])
def test_without_names(query: str, names: set[str], expected: str) -> None:
    assert without_names(query, names) == expected


def test_restated_and_dense_without_names_in_a_real_store(tmp_path: Path) -> None:
    """A change said by the other speaker to the subject, months later, among the
    subject's small talk: with both mechanisms, "now" answers with it; as of a day
    between, the old statement; a series question is ordered as without them."""
    with Memory(settings=Settings(home=tmp_path, extract_facts=False)) as memory:
        assert memory.internals.embedder.wait()
        ns = "chat:restated"
        old, _, pet1 = memory.store_conversation(
            [{"speaker": "Odile", "content": "I've been at Halden Foods for three years."},
             {"speaker": "Odile", "content": "Did you watch the match on Saturday?"},
             {"speaker": "Odile", "content": "We have a dog called Biscuit."}],
            namespace=ns, session_id="s1", observed_at="2024-01-10T10:00:00Z")
        _, new, pet2 = memory.store_conversation(
            [{"speaker": "Odile", "content": "Haha, that sounds about right."},
             {"speaker": "Bram",
              "content": "How are you finding Marlow Insurance? A change after Halden Foods."},
             {"speaker": "Odile", "content": "We adopted a cat as well, Mochi."}],
            namespace=ns, session_id="s2", observed_at="2024-08-10T10:00:00Z")
        base = memory.internals.recaller.tuning
        on = replace(base, restated_depth=5, names_in_dense_query=False)
        memory.internals.recaller.tuning = on
        now = memory.recall("Which company is Odile at?", namespace=ns, limit=4, pure=True)
        assert now[0].id == new
        then = memory.recall("Which company is Odile at?", namespace=ns, limit=4, pure=True,
                             as_of="2024-04-01T00:00:00Z")
        assert then[0].id == old
        series = [h.id for h in memory.recall("What pets does Odile have?", namespace=ns,
                                              limit=6, pure=True)]
        memory.internals.recaller.tuning = replace(on, restated_depth=0)
        assert [h.id for h in memory.recall("What pets does Odile have?", namespace=ns,
                                            limit=6, pure=True)] == series
        assert {pet1, pet2} <= set(series)
