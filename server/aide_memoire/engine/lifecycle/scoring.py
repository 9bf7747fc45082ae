"""Utility scoring at query time: relevance times a utility multiplier, never stored.

    multiplier = 1 + w_importance * (2 * importance - 1)
                   + w_feedback   * feedback estimate          (-1 .. +1)
                   + w_retention  * (retention - 1)            (-1 .. 0)
                   + w_access     * access recency             ( 0 .. 1)
    retention  = 2 ** (-days since last use / (half_life * (1 + successes)))
    successes  = times recalled + 3 * helpful feedback
    access     = 2 ** (-days since last recall / access_half_life), 0 if never recalled

A memory with no history is neutral apart from its age: a fresh one keeps its
relevance, an old unused one loses up to w_retention of it. Multiplying (not adding)
keeps an irrelevant memory irrelevant however useful it was elsewhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core import clock

if TYPE_CHECKING:
    from ..core.settings import Settings
    from ..recall.recaller import RecallRequest
    from ..storage.repositories import MemoryRows
from ..storage.protocol import Connection

__all__ = ["OUTCOME_VALUES", "Weights", "estimate", "multiplier", "utility_adjuster"]

# What one outcome says about a memory; the estimate is their mean with one neutral
# prior observation, so a single vote moves it half way.
OUTCOME_VALUES = {"helpful": 1.0, "unhelpful": -0.5, "wrong": -1.0}
HELPFUL_AS_RECALLS = 3
MIN_MULTIPLIER = 0.05
_DAY_S = 86_400.0


@dataclass(frozen=True)
class Weights:
    importance: float = 0.1
    feedback: float = 0.3
    retention: float = 0.15
    access: float = 0.0
    half_life_days: float = 30.0
    access_half_life_days: float = 7.0

    @classmethod
    def from_settings(cls, settings: Settings) -> Weights:
        return cls(
            importance=settings.lifecycle_weight_importance,
            feedback=settings.lifecycle_weight_feedback,
            retention=settings.lifecycle_weight_retention,
            access=settings.lifecycle_weight_access,
            half_life_days=settings.lifecycle_half_life_days,
            access_half_life_days=settings.lifecycle_access_half_life_days,
        )

    @property
    def bounds(self) -> tuple[float, float]:
        """The smallest and largest multiplier any memory can get."""
        low = max(MIN_MULTIPLIER, 1 - self.importance - self.feedback - self.retention)
        return low, 1 + self.importance + self.feedback + self.access


def estimate(helpful: int, unhelpful: int, wrong: int) -> float:
    total = (
        helpful * OUTCOME_VALUES["helpful"]
        + unhelpful * OUTCOME_VALUES["unhelpful"]
        + wrong * OUTCOME_VALUES["wrong"]
    )
    return max(-1.0, min(1.0, total / (helpful + unhelpful + wrong + 1)))


def _days(since: datetime | None, now: datetime) -> float:
    if since is None:
        return math.inf
    return max(0.0, (now - since).total_seconds() / _DAY_S)


def retention(
    created: datetime, last_access: datetime | None, successes: float, weights: Weights,
    now: datetime,
) -> float:
    last_use = max(created, last_access) if last_access else created
    stability = weights.half_life_days * (1 + max(0.0, successes))
    return float(2.0 ** (-_days(last_use, now) / stability))


def multiplier(
    *, importance: float, utility: float, access_count: int, helpful: int,
    created: datetime, last_access: datetime | None, weights: Weights, now: datetime,
) -> float:
    successes = access_count + HELPFUL_AS_RECALLS * helpful
    kept = retention(created, last_access, successes, weights, now)
    access = 0.0
    if last_access is not None:
        access = float(2.0 ** (-_days(last_access, now) / weights.access_half_life_days))
    value = (
        1.0
        + weights.importance * (2 * importance - 1)
        + weights.feedback * utility
        + weights.retention * (kept - 1)
        + weights.access * access
    )
    return max(MIN_MULTIPLIER, value)


def utility_adjuster(
    weights: Weights,
    rows: MemoryRows,
) -> Any:
    """A recall adjuster (see recall.Adjuster) applying the multiplier.

    Only candidates that could still reach the top ``limit`` are looked up: one whose
    fused score times the largest multiplier stays below the limit-th score times the
    smallest cannot.
    """
    low, high = weights.bounds

    def adjust(
        conn: Connection,
        request: RecallRequest,
        fused: dict[int, float],
    ) -> dict[int, float]:
        if not fused:
            return fused
        ordered = sorted(fused.values(), reverse=True)
        kth = ordered[min(request.limit, len(ordered)) - 1]
        floor = kth * low / high if kth > 0 else -math.inf
        wanted = [r for r, s in fused.items() if s >= floor]
        now = clock.now()
        out = dict(fused)
        for rowid, importance, utility, count, created, accessed, helpful in rows.usage(
            conn, wanted
        ):
            created_at = clock.parse_stored(created)
            assert created_at is not None
            factor = multiplier(
                importance=importance, utility=utility, access_count=count, helpful=helpful,
                created=created_at, last_access=clock.parse_stored(accessed), weights=weights,
                now=now,
            )
            out[rowid] = fused[rowid] * factor
        return out

    return adjust
