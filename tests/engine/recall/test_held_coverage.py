"""The "terms" coverage of query-adaptive fusion (engine/recall/held.py): the share of the
query's idf mass a row holds, which what else the store holds does not move.

Built from classes: a conversation's turns (about two people), stored alone and then
among many shorter notes of another make-up holding one of the question's words (so the
turns are long for FTS5's length normalisation); the same question is asked of both.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from aide_memoire import InvalidInput, Memory, Settings
from aide_memoire.engine.recall.fusion import (
    Candidates,
    RecallTuning,
    keyword_coverage,
    keyword_weight,
)
from aide_memoire.engine.recall.held import held_share
from aide_memoire.engine.recall.recaller import RecallRequest
from aide_memoire.engine.storage.stems import stems
from aide_memoire.engine.storage.store import RowFilter

TURNS = [
    "Caroline joined a new activist group last Tuesday",
    "Melanie painted a lake at sunrise",
    "Caroline went to a support meeting in town",
    "Melanie took the kids camping near the mountains",
    "Caroline is reading a book about adoption",
    "Melanie signed up for a pottery class",
]
QUESTION = "when did caroline join the activist group"
NOTE = "group {i}"


def test_stems_are_fts5s_own() -> None:
    assert stems(["joined groups", "join"]) == [{"join", "group"}, {"join"}]
    assert stems([]) == []


def test_held_share_is_the_largest_idf_share_one_text_holds() -> None:
    idfs = {"join": 1.0, "activist": 3.0}
    assert held_share(idfs, ["she joined", "an activist"]) == pytest.approx(0.75)
    assert held_share(idfs, ["she joined an activist rally"]) == pytest.approx(1.0)
    assert held_share(idfs, ["nothing of it"]) == 0.0
    assert held_share(idfs, []) == 0.0
    assert held_share({"join": 0.0}, ["join"]) == 1.0  # no idf mass: nothing to miss


def test_coverage_basis_on_candidates() -> None:
    found = Candidates(keyword={1: 2.0}, dense={1: 0.5}, dense_live=True, keyword_ideal=8.0,
                       keyword_held=0.9)
    tuning = RecallTuning(keyword_weight=0.5, adaptive_keyword=0.5)
    assert keyword_coverage(found) == pytest.approx(0.25)
    assert keyword_coverage(found, "terms") == pytest.approx(0.9)
    assert keyword_weight(found, tuning) == pytest.approx(0.25)
    assert keyword_weight(found, replace(tuning, coverage_basis="terms")) == 0.5
    assert keyword_coverage(replace(found, keyword_held=None), "terms") == 1.0
    with pytest.raises(InvalidInput, match="coverage basis"):
        keyword_coverage(found, "rows")


def _coverages(home: Path, notes: int) -> tuple[float, float]:
    settings = Settings(home=home, embedding_model="none", extract_facts=False)
    with Memory(settings=settings) as memory:
        memory.store_many([{"content": t} for t in TURNS], namespace="n")
        if notes:
            memory.store_many([{"content": NOTE.format(n=k % 7, i=k)} for k in range(notes)],
                              namespace="n")
        recaller = memory.internals.recaller
        recaller.tuning = replace(recaller.tuning, coverage_basis="terms")
        with memory.internals.db.read() as conn:
            found = recaller.candidates(conn, RecallRequest(
                query=QUESTION, where=RowFilter(namespaces=["n"]), limit=10))
    assert found.keyword_held is not None
    return keyword_coverage(found), keyword_coverage(found, "terms")


def test_terms_coverage_does_not_move_with_the_store(tmp_path: Path) -> None:
    bm25_alone, terms_alone = _coverages(tmp_path / "alone", 0)
    bm25_among, terms_among = _coverages(tmp_path / "among", 1500)
    # The turn holding "joined", "activist" and "group" (and "Caroline") holds all of the
    # question's words the keyword side searches: a full share, alone and among the notes.
    assert terms_alone == pytest.approx(1.0)
    assert terms_among == pytest.approx(1.0)
    # bm25's share of the ideal row moves with the notes' idfs and lengths.
    assert bm25_among < 0.8 * bm25_alone
