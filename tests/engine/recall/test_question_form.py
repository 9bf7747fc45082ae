"""Issue 31's query-side structure: the dense query as a statement, time in the question,
the time and name-bridge stages. Pure functions on classes of input (question openings,
month / year / relative expressions), then the statement form through a real store."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.core.errors import InvalidInput
from aide_memoire.engine.recall.fusion import RecallTuning
from aide_memoire.engine.recall.query_form import as_statement
from aide_memoire.engine.recall.question_time import question_window
from aide_memoire.engine.recall.stages import RowFact, bridge_names, prefer_dated

OPENINGS = [
    ("why did the overnight data load crash", "the overnight data load crash"),
    ("What did Odile research?", "Odile research"),
    ("When did Bastien paint the fence?", "Bastien paint the fence"),
    ("Would Ruth enjoy a trip to a museum?", "Ruth enjoy a trip to a museum"),
    ("How long has Amadou been at the bakery?", "Amadou been at the bakery"),
    ("what kind of music does Keziah like", "music does Keziah like"),
    ("Isn't Lorenz the outdoorsy type?", "Lorenz the outdoorsy type"),
    ("who signs off on login changes", "signs off on login changes"),
]
NOT_QUESTIONS = ["the nightly ETL died", "whatever happened to the build", "What?", "Why?"]


@pytest.mark.parametrize(("question", "statement"), OPENINGS)
def test_interrogative_openings_leave_the_dense_query(question: str, statement: str) -> None:
    assert as_statement(question) == statement


@pytest.mark.parametrize("text", NOT_QUESTIONS)
def test_text_without_an_opening_or_with_nothing_after_it_is_kept(text: str) -> None:
    assert as_statement(text) == text


REF = datetime(2023, 8, 20, 12, tzinfo=UTC).timestamp()


def _utc(year: int, month: int, day: int, hour: int = 0) -> float:
    return datetime(year, month, day, hour, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(("question", "inside", "outside"), [
    ("What did Odile do in May 2022?", _utc(2022, 5, 15), _utc(2023, 5, 15)),
    ("What did Odile do in May?", _utc(2023, 5, 15), _utc(2022, 5, 15)),
    # A month after the reference's month: last year's.
    ("Where did Ruth go in October?", _utc(2022, 10, 3), _utc(2023, 10, 3)),
    ("What happened in 2021?", _utc(2021, 7, 1), _utc(2022, 1, 2)),
    ("What did Bastien buy last week?", _utc(2023, 8, 12), _utc(2023, 7, 20)),
    ("What did Keziah cook two months ago?", _utc(2023, 6, 22), _utc(2023, 8, 15)),
    ("Who called yesterday?", _utc(2023, 8, 19, 18), _utc(2023, 8, 10)),
])
def test_time_in_the_question_is_a_window(question: str, inside: float,
                                          outside: float) -> None:
    window = question_window(question, REF)
    assert window is not None
    start, end = window
    assert start <= inside < end
    assert not start <= outside < end


@pytest.mark.parametrize("question", [
    "What may Odile do next?",  # "may" the verb
    "Where does Ruth work?",
    "How many pets does Amadou have?",
])
def test_questions_naming_no_time_have_no_window(question: str) -> None:
    assert question_window(question, REF) is None


def _facts(table: dict[int, RowFact]):  # type: ignore[no-untyped-def]
    return lambda rows: {r: table[r] for r in rows if r in table}


def test_time_stage_lifts_the_candidates_said_within_the_window() -> None:
    fused = {1: 0.9, 2: 0.8, 3: 0.7}
    facts = _facts({1: RowFact("s1", _utc(2023, 3, 2)), 2: RowFact("s2", _utc(2023, 5, 9)),
                    3: RowFact("s3", _utc(2023, 8, 1))})
    on = RecallTuning(dated_weight=0.2)
    out = prefer_dated(fused, "What did Odile bake in May?", facts, on)
    assert max(out, key=lambda r: out[r]) == 2
    assert out[1] == fused[1] and out[3] == fused[3]
    assert prefer_dated(fused, "What did Odile bake?", facts, on) == fused
    assert prefer_dated(fused, "What did Odile bake in May?", facts, RecallTuning()) == fused


def test_name_bridge_lifts_turns_sharing_a_name_with_the_best_hits() -> None:
    # 1 names the sister (Noor); 4 says what Noor did, without the question's words.
    fused = {1: 0.9, 2: 0.5, 3: 0.45, 4: 0.4}
    facts = _facts({
        1: RowFact("s1", 1.0, speaker="Odile", names=frozenset({"noor"})),
        2: RowFact("s1", 2.0, speaker="Odile", names=frozenset({"odile"})),
        3: RowFact("s2", 3.0, speaker="Ruth", names=frozenset()),
        4: RowFact("s3", 4.0, speaker="Odile", names=frozenset({"noor", "lisbon"})),
    })
    on = RecallTuning(bridge_weight=0.2, bridge_from=1)
    out = bridge_names(fused, {"sister"}, facts, on)
    assert out[4] == pytest.approx(0.6) and out[2] == fused[2] and out[3] == fused[3]
    # A name the question asks is no bridge (it already ranks); nor is a speaker's name.
    assert bridge_names(fused, {"noor"}, facts, on) == fused
    assert bridge_names(fused, {"sister"}, facts, RecallTuning()) == fused


def test_statement_form_through_a_real_store(tmp_path: Path) -> None:
    with Memory(settings=Settings(home=tmp_path, extract_facts=False)) as memory:
        assert memory.internals.embedder.wait()
        ns = "notes:form"
        memory.store_many([
            {"content": "The nightly ETL died because the connection pool ran dry."},
            {"content": "Why did we pick Kafka? Ask the platform team."},
        ], namespace=ns)
        recaller = memory.internals.recaller
        recaller.tuning = replace(recaller.tuning, dense_query_form="statement")
        hits = memory.recall("why did the nightly ETL die", namespace=ns, limit=2)
        assert "ETL" in hits[0].content
        recaller.tuning = replace(recaller.tuning, dense_query_form="spoken")
        with pytest.raises(InvalidInput, match="dense query form"):
            memory.recall("why did the nightly ETL die", namespace=ns, limit=2)
