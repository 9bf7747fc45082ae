"""Feedback moves ranking the expected way; pure mode reproduces relevance exactly."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.core import clock
from aide_memoire.engine.core.errors import InvalidInput, NotFound
from aide_memoire.engine.lifecycle.scoring import Weights, estimate, multiplier

NS = "project:rank"
DOCS = [
    "The staging deploy key is kept in the vault under ops/staging.",
    "The production deploy key is kept in the vault under ops/prod.",
    "The deploy key for the docs site lives in the vault too.",
    "Rotate every key in the vault each quarter.",
    "Lunch is at noon on Fridays.",
]
QUERY = "where is the deploy key kept in the vault"


def keyword(home: Path, **extra: object) -> Settings:
    return Settings(home=home, embedding_model="none", **extra)  # type: ignore[arg-type]


def _ranked(memory: Memory, **kwargs: Any) -> list[tuple[str, float]]:
    return [(h.id, h.score) for h in memory.recall(QUERY, namespace=NS, limit=5, **kwargs)]


def test_feedback_moves_ranking_and_pure_mode_is_pure_relevance(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(settings=keyword(home, lifecycle_scoring=False)) as plain:
        ids = plain.store_many([{"content": text} for text in DOCS], namespace=NS)
        relevance = _ranked(plain)
    with Memory(settings=keyword(home)) as memory:
        pure = _ranked(memory, pure=True)
        assert pure == relevance  # same ids, same order, same scores
        first, second = relevance[0][0], relevance[1][0]
        for _ in range(2):
            memory.feedback(first, "wrong", namespace=NS)
            memory.feedback(second, "helpful", namespace=NS)
        order = [i for i, _ in _ranked(memory)]
        assert order.index(second) < order.index(first)
        assert _ranked(memory, pure=True) == relevance  # feedback never leaks into pure
        result = memory.feedback(first, "wrong", namespace=NS)
        assert (result.wrong, result.estimate) == (3, -0.75)
        assert memory.get(first, namespace=NS).content == DOCS[ids.index(first)]
    with Memory(settings=keyword(home, lifecycle_scoring=False)) as plain:
        assert _ranked(plain) == relevance  # off at the setting: relevance, whatever feedback


def test_feedback_refuses_bad_input(tmp_path: Path) -> None:
    with Memory(settings=keyword(tmp_path / "home")) as memory:
        memory_id = memory.store("something", namespace=NS)
        with pytest.raises(InvalidInput, match="helpful, unhelpful or wrong"):
            memory.feedback(memory_id, "great", namespace=NS)
        with pytest.raises(NotFound):
            memory.feedback(memory_id, "helpful", namespace="other")
        events = [e.action for e in memory.audit_history(memory_id)]
        assert "lifecycle.feedback" not in events
        memory.feedback(memory_id, "helpful", namespace=NS)
        assert "lifecycle.feedback" in [e.action for e in memory.audit_history(memory_id)]


def test_multiplier_components() -> None:
    weights = Weights()
    now = clock.now()
    fresh = dict(importance=0.5, utility=0.0, access_count=0, helpful=0, last_access=None,
                 weights=weights, now=now)
    assert multiplier(created=now, **fresh) == pytest.approx(1.0)  # type: ignore[arg-type]
    old = now - timedelta(days=300)
    stale = multiplier(created=old, **fresh)  # type: ignore[arg-type]
    used = multiplier(created=old, **{**fresh, "access_count": 20,  # type: ignore[arg-type]
                                      "last_access": now - timedelta(days=30)})
    assert stale < used < 1.0 + weights.access
    assert multiplier(created=now, **{**fresh, "importance": 1.0}) > 1.0  # type: ignore[arg-type]
    assert estimate(0, 0, 0) == 0 and estimate(1, 0, 0) == 0.5 and estimate(0, 0, 1) == -0.5
    low, high = weights.bounds
    assert low <= stale and used <= high
