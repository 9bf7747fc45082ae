"""bench/_paired.py: the rule that decides issue 31's defaults says "helps", "hurts" or "tied"
as its paired tests say, and a change inside the noise is a tie."""

from __future__ import annotations

from types import ModuleType

import numpy as np

from tests.bench_modules import load_bench


def _rule() -> ModuleType:
    return load_bench("_paired")


def test_a_change_that_lifts_many_questions_helps_and_its_reverse_hurts() -> None:
    rule = _rule()
    rng = np.random.default_rng(5)
    before = rng.integers(1, 40, size=300)
    after = np.maximum(1, before - rng.integers(0, 6, size=300))  # never lower
    assert rule.paired(before, after)["verdict"] == "helps"
    assert rule.paired(after, before)["verdict"] == "hurts"


def test_one_question_of_hundreds_either_way_is_a_tie() -> None:
    rule = _rule()
    before = np.full(500, 3)
    after = before.copy()
    after[0] = 12  # one question falls out of the first ten
    test = rule.paired(before, after)
    assert test["verdict"] == "tied"
    assert (test["hit10_gained"], test["hit10_lost"]) == (0, 1)
    assert rule.paired(before, before)["verdict"] == "tied"


def test_a_gain_on_one_metric_with_a_loss_on_the_other_is_no_help() -> None:
    rule = _rule()
    # Thirty questions rise from 2 to 1 (MRR up); twenty fall from 10 to 11 (hit@10 down).
    before = np.array([2] * 30 + [10] * 20 + [5] * 50)
    after = np.array([1] * 30 + [11] * 20 + [5] * 50)
    test = rule.paired(before, after)
    assert test["mrr_delta"] > 0 and test["hit10_lost"] == 20
    assert test["verdict"] == "hurts"


def test_on_by_default_needs_no_hurt_and_one_help() -> None:
    rule = _rule()
    assert rule.combine(["tied", "helps", "tied"])
    assert not rule.combine(["tied", "tied", "tied"])
    assert not rule.combine(["helps", "hurts", "helps"])
