"""How the ONNX encoder cuts a batch: groups of similar token length, padding bounded."""

from __future__ import annotations

import random

import pytest

from aide_memoire.engine.recall.onnx_encoder import PAD_SLACK, length_groups


def _random_lengths(seed: int) -> list[int]:
    rng = random.Random(seed)
    size = rng.randint(0, 80)
    shape = rng.choice(["short turns", "mixed", "one long tail", "all equal"])
    if shape == "short turns":
        return [rng.randint(8, 60) for _ in range(size)]
    if shape == "mixed":
        return [rng.randint(3, 256) for _ in range(size)]
    if shape == "one long tail":
        return [rng.randint(10, 20) for _ in range(size)] + [256]
    return [rng.randint(1, 256)] * size


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("batch_size", [1, 3, 16, 64])
def test_every_text_once_in_bounded_ascending_groups(seed: int, batch_size: int) -> None:
    lengths = _random_lengths(seed)
    groups = length_groups(lengths, batch_size)
    flat = [i for group in groups for i in group]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths)  # shortest first, across groups
    for group in groups:
        assert 1 <= len(group) <= batch_size
        widths = [lengths[i] for i in group]
        if len(group) > 1:  # a text alone carries no padding at all
            assert max(widths) * len(group) <= PAD_SLACK * sum(widths) + 1e-9


def test_equal_lengths_fill_whole_batches() -> None:
    groups = length_groups([12] * 40, 16)
    assert [len(g) for g in groups] == [16, 16, 8]


def test_a_long_text_is_not_padded_into_a_batch_of_short_ones() -> None:
    lengths = [10] * 7 + [200]
    groups = length_groups(lengths, 16)
    assert groups[-1] == [7]
    assert sorted(groups[0]) == list(range(7))


def test_a_looser_slack_allows_more_padding() -> None:
    lengths = [10, 11, 12, 13, 14, 15, 16, 17]
    tight = length_groups(lengths, 16, slack=1.0)
    loose = length_groups(lengths, 16, slack=2.0)
    assert all(len(g) == 1 for g in tight)  # slack 1: no padding, each length alone
    assert loose == [list(range(8))]


def test_nothing_in_nothing_out() -> None:
    assert length_groups([], 16) == []
