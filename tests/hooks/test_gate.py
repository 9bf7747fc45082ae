"""The prompt hook's gate, keyword-only and on its pure parts (the model's: test_gate_model).

A real keyword-only store in a temp home; the gate's signals and decisions as values.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from aide_memoire import Memory
from aide_memoire.hooks.clauses import MAX_CLAUSES, clauses
from aide_memoire.hooks.gate import (
    GateTuning,
    Signals,
    calibrated,
    companion_floor,
    decide,
    relevance,
    score,
    signals,
)
from aide_memoire.hooks.late import content_rows, maxsim
from aide_memoire.hooks.prompt import HEADER, candidates, hit_signals, prompt_context, prompt_stems
from aide_memoire.hooks.service import handle

from .gate_corpus import distractors, load, split

NS = "project:app-123abc"


def test_calibration_is_monotone_and_spans_the_scale() -> None:
    tuning = GateTuning()
    values = [calibrated(c / 10, tuning) for c in range(-2, 11)]
    assert values == sorted(values)
    assert values[0] < 0.05 < 0.95 < values[-1]


def test_margin_is_over_the_best_other_cosine() -> None:
    found = signals(["a", "b", "c"], ["note"] * 3, [0.4, 0.6, 0.3], [0.0, 0.0, 0.0])
    assert [s.rank for s in found] == [1, 2, 3]
    assert [round(s.margin, 6) for s in found] == [-0.2, 0.2, -0.3]
    lexical = signals(["a", "b"], ["note"] * 2, [None, None], [1.0, 0.5])
    assert [s.margin for s in lexical] == [0.0, 0.0]


def test_dense_decision_follows_the_cosine_not_the_words() -> None:
    tuning = GateTuning()
    close = Signals("a", "learning", 0.75, 0.0, 1, 0.2)
    far = Signals("b", "learning", 0.05, 0.0, 1, 0.0)
    assert decide(close, tuning).decision == "injected"
    assert decide(far, tuning).decision == "below_gate"
    # Every word shared does not carry an unrelated cosine alone.
    assert decide(dataclasses.replace(far, overlap=1.0), tuning).decision == "below_gate"
    reason = decide(close, tuning)
    assert reason.gate == "dense" and reason.calibrated is not None
    assert 0.0 < reason.calibrated < 1.0 and reason.dense == 0.75


def test_a_memory_is_cut_into_the_clauses_a_prompt_may_name() -> None:
    fix = ("pytest-asyncio 0.23 requires asyncio_mode = auto in pytest.ini (or a marker on "
           "each test); otherwise async test functions are collected but silently skipped.")
    cut = clauses(fix)
    assert cut[-1] == "otherwise async test functions are collected but silently skipped"
    assert cut[0].startswith("pytest-asyncio 0.23 requires") and "marker" not in cut[0]
    assert clauses("The deploy runs on tern-07.") == []  # one clause: nothing to add
    assert clauses("Yes. Ok. Sure thing, see you.") == []  # pieces under three words
    many = " ".join(f"Step {n} runs the job." for n in range(20))
    assert len(clauses(many)) == MAX_CLAUSES


def test_the_best_clause_raises_the_cosine_by_its_weight_only_when_higher() -> None:
    tuning = dataclasses.replace(GateTuning(), w_clause=0.5)
    base = Signals("a", "learning", 0.4, 0.0, 1, 0.0)
    assert relevance(base, tuning) == 0.4  # no clause read
    assert relevance(dataclasses.replace(base, clause=0.6), tuning) == pytest.approx(0.5)
    assert relevance(dataclasses.replace(base, clause=0.3), tuning) == 0.4
    off = dataclasses.replace(tuning, w_clause=0.0)
    assert score(dataclasses.replace(base, clause=0.9), off) == score(base, off)
    reason = decide(dataclasses.replace(base, clause=0.61234), tuning)
    assert reason.clause == 0.6123


def test_the_late_score_adds_its_weight_above_its_offset_only() -> None:
    tuning = dataclasses.replace(GateTuning(), w_late=0.5, late_offset=0.3)
    base = Signals("a", "learning", 0.4, 0.0, 1, 0.0)
    assert score(base, tuning) == pytest.approx(0.4)  # not read
    assert score(dataclasses.replace(base, late=0.7), tuning) == pytest.approx(0.6)
    assert score(dataclasses.replace(base, late=0.2), tuning) == pytest.approx(0.4)
    off = dataclasses.replace(tuning, w_late=0.0)
    assert score(dataclasses.replace(base, late=0.9), off) == score(base, off)
    assert decide(dataclasses.replace(base, late=0.61234), tuning).late == 0.6123


def test_the_peak_and_the_spread_add_their_weight_only_when_read_and_weighed() -> None:
    tuning = dataclasses.replace(GateTuning(), w_overlap=0.0, w_margin=0.0, w_gap=0.5,
                                 w_spread=2.0)
    base = Signals("a", "learning", 0.5, 0.0, 1, 0.0)
    assert score(base, tuning) == pytest.approx(0.5)  # no dense profile: neither
    assert score(dataclasses.replace(base, gap=0.2), tuning) == pytest.approx(0.6)
    # A cosine below the k-th densest row takes nothing away.
    assert score(dataclasses.replace(base, gap=-0.1), tuning) == pytest.approx(0.5)
    # The spread raises every candidate of the prompt alike.
    assert score(dataclasses.replace(base, spread=0.08), tuning) == pytest.approx(0.66)
    both = dataclasses.replace(base, gap=0.3, spread=0.08)
    off = dataclasses.replace(tuning, w_gap=0.0, w_spread=0.0)
    assert score(both, off) == score(base, off)
    reason = decide(dataclasses.replace(base, gap=0.12345, spread=0.081234), tuning)
    assert (reason.gap, reason.spread) == (0.1235, 0.0812)


def test_maxsim_averages_each_query_row_s_best_match() -> None:
    query = np.array([[1.0, 0.0], [0.0, 1.0]])
    doc = np.array([[1.0, 0.0], [0.6, 0.8]])
    # Row 1 meets itself (1.0); row 2's best is the second doc row (0.8).
    assert maxsim(query, doc) == pytest.approx(0.9)
    assert maxsim(query, np.zeros((0, 2))) == 0.0


def test_only_content_words_take_part_in_the_late_score() -> None:
    tokens = ["[CLS]", "why", "is", "the", "deploy", "##er", "slow", "?", "[SEP]"]
    word_ids = [None, 0, 1, 2, 3, 3, 4, 5, None]
    # Stop words, punctuation and special tokens out; both pieces of "deployer" in.
    assert content_rows(tokens, word_ids) == [4, 5, 6]


def test_a_companion_passes_its_own_floor_below_the_threshold() -> None:
    tuning = dataclasses.replace(GateTuning(), companion_gap=0.1)
    assert companion_floor(tuning) == pytest.approx(tuning.threshold - 0.1)
    between = Signals("a", "learning", tuning.threshold - 0.05, 0.0, 1, 0.0)
    assert decide(between, tuning).decision == "injected"  # may follow a first one
    assert decide(between, dataclasses.replace(tuning, companion_gap=0.0)).decision \
        == "below_gate"


def test_lexical_gate_without_the_model() -> None:
    tuning = GateTuning()
    assert decide(Signals("a", "note", None, 1.0, 1, 0.0), tuning).decision == "injected"
    below = decide(Signals("a", "note", None, tuning.lexical_floor - 0.01, 1, 0.0), tuning)
    assert below.decision == "below_gate" and below.gate == "lexical"
    assert below.calibrated is None


def test_split_is_fixed_and_keeps_a_memory_s_prompts_together() -> None:
    tune, held = load("tune"), load("held")
    assert {m.key for m in tune.memories}.isdisjoint({m.key for m in held.memories})
    assert len(tune.memories) + len(held.memories) == len(load().memories)
    assert all(split(m.key) == "held" for m in held.memories)
    # Every class is on both sides, so the held-out figures speak for each.
    assert {m.cls for m in tune.memories} == {m.cls for m in held.memories}
    assert len(set(distractors(500))) == 500


@pytest.fixture
def store(kmemory: Memory) -> Memory:
    kmemory.store_many([{"content": t} for t in distractors(300)], namespace=NS)
    return kmemory


def test_keyword_only_injects_the_literal_match_with_its_reason(store: Memory) -> None:
    wanted = store.store("Deploys to staging need the VPN: the bastion only allows the "
                         "office range.", namespace=NS, kind="learning")
    shown = prompt_context(store, NS, "deploys to staging need the vpn?", budget_tokens=400)
    assert shown.ids[0] == wanted and shown.text.startswith(HEADER)
    (reason, *_) = shown.reasons
    assert reason.id == wanted and reason.gate == "lexical" and reason.decision == "injected"
    assert len(shown.reasons) == len(shown.ids)


def test_unrelated_and_trivial_prompts_get_nothing(store: Memory) -> None:
    for prompt in ("what is the capital of Australia", "thanks!", "/clear", "ok"):
        assert prompt_context(store, NS, prompt, budget_tokens=400).ids == ()


def test_at_most_max_memories_within_budget_never_twice(store: Memory) -> None:
    for n in range(8):
        store.store(f"Release checklist item {n}: tag the release and update the changelog.",
                    namespace=NS)
    prompt = "release checklist tag changelog"
    shown = prompt_context(store, NS, prompt, budget_tokens=400)
    assert len(shown.ids) == GateTuning().max_memories
    assert len(shown.text) <= 400 * 4
    tight = prompt_context(store, NS, prompt, budget_tokens=50)
    assert len(tight.text) <= 50 * 4 and len(tight.ids) < len(shown.ids)
    again = prompt_context(store, NS, prompt, budget_tokens=400, exclude=set(shown.ids))
    assert again.ids and set(again.ids).isdisjoint(shown.ids)


def test_a_turn_of_the_running_session_is_never_injected(store: Memory) -> None:
    store.store_conversation(
        [{"speaker": "user", "content": "the release checklist needs a changelog tag"}],
        namespace=NS, session_id="running")
    assert prompt_context(store, NS, "release checklist changelog tag", budget_tokens=400,
                          session_id="running").ids == ()
    assert prompt_context(store, NS, "release checklist changelog tag", budget_tokens=400,
                          session_id="another").ids


def test_handle_returns_the_reasons_as_json_values(store: Memory) -> None:
    wanted = store.store("The nightly export runs at 02:00 UTC from the build host.",
                         namespace=NS)
    answer = handle(store, {"op": "prompt", "namespace": NS,
                            "prompt": "nightly export runs when on the build host",
                            "session_id": "s1"})
    assert answer["ids"] == [wanted]
    (reason,) = answer["reasons"]
    assert reason["id"] == wanted and reason["decision"] == "injected"
    assert set(reason) >= {"dense", "calibrated", "overlap", "rank", "margin", "kind", "score"}


def test_keyword_only_candidates_have_no_dense_profile(store: Memory) -> None:
    hits, profile = candidates(store, NS, "the tenant provisioning script after DNS changes")
    assert profile is None and hits
    assert all(s.dense is None and s.z is None
               for s in hit_signals(hits, prompt_stems("tenant provisioning dns")))
