"""Issue 31, fourth round: the second looks of query-adaptive fusion (pure, on small score
sets) and dense pseudo-relevance feedback through a real store and the real model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.core.errors import InvalidInput
from aide_memoire.engine.recall.fusion import Candidates, RecallTuning, keyword_weight
from aide_memoire.engine.recall.recaller import Recaller, RecallRequest
from aide_memoire.engine.storage.store import RowFilter


def _found(keyword: dict[int, float], dense: dict[int, float]) -> Candidates:
    # The best keyword row holds a quarter of the ideal: coverage alone halves the weight
    # (full weight from half the ideal, the default).
    return Candidates(keyword=keyword, dense=dense, dense_live=True,
                      keyword_ideal=4 * max(keyword.values()))


def test_agreement_restores_the_keyword_weight_when_both_sides_point_at_one_row() -> None:
    dense = {r: 0.9 - 0.01 * r for r in range(1, 21)}
    tuning = RecallTuning(keyword_weight=0.6, adaptive_signal="agreement")
    coverage = replace(tuning, adaptive_signal="coverage")
    agree = _found({3: 2.0, 40: 1.0}, dense)  # keyword's best is dense's third
    assert keyword_weight(agree, coverage) == pytest.approx(0.3)
    assert keyword_weight(agree, tuning) == pytest.approx(0.6)
    apart = _found({40: 2.0, 3: 1.0}, dense)  # keyword's best is no dense leader
    assert keyword_weight(apart, tuning) == pytest.approx(0.3)


def test_margin_keeps_the_coverage_share_only_when_the_dense_side_has_a_clear_best() -> None:
    tuning = RecallTuning(keyword_weight=0.6, adaptive_signal="margin")
    keyword = {40: 2.0}
    peaked = {1: 0.9, **{r: 0.5 - 0.001 * r for r in range(2, 12)}}
    flat = {r: 0.9 - 0.01 * r for r in range(1, 12)}
    assert keyword_weight(_found(keyword, peaked), tuning) == pytest.approx(0.3)
    assert keyword_weight(_found(keyword, flat), tuning) == pytest.approx(0.6)


def test_second_looks_never_raise_a_weight_coverage_leaves_whole() -> None:
    found = Candidates(keyword={1: 2.0}, dense={2: 0.9, 3: 0.1, 4: 0.05}, dense_live=True,
                       keyword_ideal=2.0)
    for signal in ("coverage", "agreement", "margin"):
        assert keyword_weight(found, RecallTuning(adaptive_signal=signal)) == 0.55


def test_an_unknown_adaptive_signal_is_named() -> None:
    found = _found({1: 1.0}, {1: 0.5, 2: 0.4})
    with pytest.raises(InvalidInput, match="adaptive signal 'loudness'"):
        keyword_weight(found, RecallTuning(adaptive_signal="loudness"))


NOTES = [
    "The staging database is backed up every night at two",
    "Backups of the staging Postgres run nightly via pg_dump",
    "Restore drills for database backups happen each quarter",
    "Our office coffee machine needs descaling monthly",
    "The marketing site is deployed from the main branch",
    "Team lunch is on Thursdays at the noodle bar",
]


@pytest.fixture(scope="module")
def ops_notes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    """One store with the real model holding NOTES in "ops", for the tests that read it;
    each test sets the recaller's tuning it needs and the fixture puts it back."""
    home = tmp_path_factory.mktemp("second-look")
    with Memory(settings=Settings(home=home, extract_facts=False)) as memory:
        assert memory.internals.embedder.wait(), memory.internals.embedder.error
        memory.store_many([{"content": t, "kind": "note"} for t in NOTES], namespace="ops")
        yield memory


@pytest.fixture
def recaller(ops_notes: Memory) -> Iterator[Recaller]:
    recaller = ops_notes.internals.recaller
    base = recaller.tuning
    yield recaller
    recaller.tuning = base


def _ops(query: str) -> RecallRequest:
    return RecallRequest(query=query, where=RowFilter(namespaces=["ops"]), limit=10, pure=True)


def test_dense_feedback_scores_the_query_moved_towards_its_best_rows(
    ops_notes: Memory, recaller: Recaller,
) -> None:
    request = _ops("when do we save copies of the staging data")
    with ops_notes.internals.db.read() as read:
        plain = recaller.candidates(read, request)
        recaller.tuning = replace(recaller.tuning, dense_feedback_docs=2,
                                  dense_feedback_weight=1.5)
        fed = recaller.candidates(read, request)
        space = ops_notes.internals.embedder.space
        assert space is not None and recaller.tables is not None
        table = recaller.tables.table_of(read, space)
        assert table is not None
        vectors = recaller.cache.reads.raw_vectors(read, table, sorted(plain.dense))
    assert set(fed.dense) == set(plain.dense)
    best = sorted(plain.dense, key=lambda r: -plain.dense[r])[:2]
    unit = {r: v / np.linalg.norm(v) for r, v in vectors.items()}
    query = recaller._query_vector(request.query)
    moved = query / np.linalg.norm(query) + 1.5 * np.mean([unit[r] for r in best], axis=0)
    moved /= np.linalg.norm(moved)
    for rowid, score in fed.dense.items():
        # The mirror scores int8 rows: off the float cosine by about 0.002 at most.
        assert score == pytest.approx(float(unit[rowid] @ moved), abs=0.01)
    # The rows the feedback came from gain on the rest: the query moved their way.
    others = [r for r in plain.dense if r not in best]
    gap_before = min(plain.dense[r] for r in best) - max(plain.dense[r] for r in others)
    gap_after = min(fed.dense[r] for r in best) - max(fed.dense[r] for r in others)
    assert gap_after > gap_before


def test_dense_feedback_off_is_one_pass_and_bad_settings_are_named(
    ops_notes: Memory, recaller: Recaller,
) -> None:
    request = _ops("who cleans the coffee machine")
    base = recaller.tuning
    with ops_notes.internals.db.read() as read:
        plain = recaller.candidates(read, request)
        recaller.tuning = replace(base, dense_feedback_docs=3, dense_feedback_weight=0.0)
        assert recaller.candidates(read, request).dense == plain.dense
        recaller.tuning = replace(base, dense_feedback_docs=3, dense_feedback_weight=-1.0)
        with pytest.raises(InvalidInput, match="dense feedback"):
            recaller.candidates(read, request)


def test_unnamed_keeps_the_full_weight_for_a_question_about_what_a_speaker_said() -> None:
    tuning = RecallTuning(keyword_weight=0.6, adaptive_signal="unnamed")
    found = _found({40: 2.0}, {1: 0.9, 2: 0.8, 3: 0.7})
    assert keyword_weight(found, tuning) == pytest.approx(0.3)
    found.speaker_rows = {1, 2}
    assert keyword_weight(found, tuning) == pytest.approx(0.6)
