"""The latest-statement stage (engine/recall/stages.prefer_latest) and what only adds
(engine/core/kinds.py): pure checks on small score sets, then through a real store.
Sentences are written from classes (a home, an employer, a database; pets, children),
not taken from the update sets the stage was scored on."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.core.kinds import only_adds, set_classes
from aide_memoire.engine.core.text import content_words, query_shape
from aide_memoire.engine.recall.fusion import RecallTuning
from aide_memoire.engine.recall.stages import RowFact, RowFacts, prefer_latest

ON = replace(RecallTuning(), latest_depth=3, latest_pool=20, latest_z=1.0)


def _fact(session: str, at: float, text: str, speaker: str = "Ana") -> RowFact:
    return RowFact(session=session, at=at, speaker=speaker, words=content_words(text),
                   adds=only_adds(text))


def _facts(rows: dict[int, RowFact]) -> RowFacts:
    return lambda ids: {r: rows[r] for r in ids if r in rows}


# Two statements of one attribute lead; the rest is small talk far below them.
FUSED = {1: 1.0, 2: 0.95, **{r: 0.2 for r in range(3, 15)}}


def _rows(old: str, new: str) -> dict[int, RowFact]:
    rows = {1: _fact("s1", 100.0, old), 2: _fact("s3", 900.0, new)}
    rows.update({r: _fact("s2", 500.0, "We should get coffee soon.") for r in range(3, 15)})
    return rows


def _order(scores: dict[int, float]) -> list[int]:
    return sorted(scores, key=lambda r: (-scores[r], r))


def test_the_newest_of_two_leading_statements_goes_first() -> None:
    rows = _rows("We rent a flat in Tampere.", "The last boxes are unpacked here in Porto.")
    shape = query_shape("Where does Ana live now?")
    moved = prefer_latest(FUSED, shape, "Where does Ana live now?", set(), _facts(rows), ON)
    assert _order(moved)[:2] == [2, 1]
    assert set(moved) == set(FUSED)  # a reordering: nothing added, nothing dropped
    assert [moved[r] for r in range(3, 15)] == [FUSED[r] for r in range(3, 15)]


@pytest.mark.parametrize("question", [
    "Where did Ana live before?",  # the past
    "What was Ana's first home?",
    "Where has Ana lived?",  # a series
    "When did Ana move?",  # about time
])
def test_questions_not_about_the_present_are_left_alone(question: str) -> None:
    rows = _rows("We rent a flat in Tampere.", "The last boxes are unpacked here in Porto.")
    assert prefer_latest(FUSED, query_shape(question), question, set(), _facts(rows),
                         ON) == FUSED


def test_off_by_default_and_needs_two_sessions() -> None:
    rows = _rows("We rent a flat in Tampere.", "The last boxes are unpacked here in Porto.")
    question = "Where does Ana live now?"
    shape = query_shape(question)
    assert prefer_latest(FUSED, shape, question, set(), _facts(rows), RecallTuning()) == FUSED
    same = dict(rows)
    same[2] = _fact("s1", 900.0, "The last boxes are unpacked here in Porto.")
    assert prefer_latest(FUSED, shape, question, set(), _facts(same), ON) == FUSED


def test_a_candidate_that_does_not_stand_out_does_not_move() -> None:
    rows = _rows("We rent a flat in Tampere.", "The last boxes are unpacked here in Porto.")
    flat = {1: 1.0, **{r: 0.9 for r in range(2, 15)}}  # the newer is one of many alike
    question = "Where does Ana live now?"
    assert prefer_latest(flat, query_shape(question), question, set(), _facts(rows),
                         ON) == flat


@pytest.mark.parametrize(("old", "new", "question"), [
    # one more member of a set-valued attribute, said without any marker
    ("Our hamster Pip bit the vet.", "Our hamster Dot bit the vet.",
     "Which hamster does Ana have?"),
    ("My nephew Arlo is six.", "My niece Juno is four.", "Who is Ana's nephew?"),
    # said to add, or that the old value holds on
    ("I work at Elmwood.", "I work at Brookside as well.", "Where does Ana work?"),
    ("I work at Elmwood.", "Elmwood is still where I work.", "Where does Ana work?"),
])
def test_what_only_adds_or_holds_is_never_put_first(old: str, new: str, question: str) -> None:
    rows = _rows(old, new)
    assert prefer_latest(FUSED, query_shape(question), question, set(), _facts(rows),
                         ON) == FUSED


def test_a_question_about_a_set_valued_attribute_is_left_alone() -> None:
    rows = _rows("I work at Elmwood.", "I work at Brookside.")
    question = "Which club is Ana in?"
    assert query_shape(question).present
    assert set_classes(question) == {"pastimes"}
    assert prefer_latest(FUSED, query_shape(question), question, set(), _facts(rows),
                         ON) == FUSED


def test_only_adds_reads_markers_and_set_classes() -> None:
    assert only_adds("We adopted a second kitten.")
    assert only_adds("I still teach at Elmwood.")
    assert only_adds("I also help out at the market.")
    assert not only_adds("We moved everything from MongoDB to PostgreSQL.")
    assert not only_adds("Leaving Nordwind for Brightleaf Health was the right call.")


def _store(memory: Memory, namespace: str, first: str, second: str) -> tuple[str, str]:
    small = ["Did you see the storm?", "Ha, true.", "The kettle broke again.",
             "Traffic was awful today.", "I watched a good film.", "We should go hiking.",
             "Work has been a lot.", "The weather turned cold.", "My cousin got a puppy.",
             "I'm so behind on emails."]
    ids = []
    for number, (key, at) in enumerate(((first, "2024-02-01T10:00:00Z"),
                                        (None, "2024-05-01T10:00:00Z"),
                                        (second, "2024-09-01T10:00:00Z"))):
        turns = [{"speaker": ("Bo", "Ana")[i % 2], "content": t}
                 for i, t in enumerate(small[number:] + small[:number])]
        if key is not None:
            turns.insert(5, {"speaker": "Ana", "content": key})
        stored = memory.store_conversation(turns, namespace=namespace,
                                           session_id=f"s{number}", observed_at=at)
        if key is not None:
            ids.append(stored[5])
    return ids[0], ids[1]


def test_through_a_real_store_now_and_as_of(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, extract_facts=False)
    with Memory(settings=settings) as memory:
        assert memory.internals.embedder.wait(), memory.internals.embedder.error
        old, new = _store(memory, "latest", "We rent a small flat in Tampere, by the lake.",
                          "Finally unpacked the last boxes here in Porto.")
        question = "Where does Ana live now?"
        memory.internals.recaller.tuning = replace(memory.internals.recaller.tuning,
                                                   latest_depth=3)
        now = memory.recall(question, namespace="latest", limit=3)
        assert [h.id for h in now[:2]] == [new, old]
        # as of a day between: only the older was said, and it comes first
        then = memory.recall(question, namespace="latest", limit=3,
                             as_of="2024-06-15T00:00:00Z")
        assert then[0].id == old
        # the past tense is not reordered: the same order as with the stage off
        past = "Where did Ana live before?"
        with_stage = [h.id for h in memory.recall(past, namespace="latest", limit=3)]
        memory.internals.recaller.tuning = replace(memory.internals.recaller.tuning,
                                                   latest_depth=0)
        assert [h.id for h in memory.recall(past, namespace="latest", limit=3)] == with_stage
