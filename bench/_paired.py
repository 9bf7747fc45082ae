"""The rule that decides a default (docs/benchmarks.md, issue 31 third round): paired tests
over per-question ranks, before and after a change, on one benchmark.

- MRR: a sign-flip permutation test over the per-question differences of the reciprocal
  rank (1 / rank within 50, else 0), 10,000 flips, fixed seed, two-sided.
- hit@10: an exact McNemar test (two-sided binomial over the discordant questions).
- "hurts" when either says worse at p < 0.05; "helps" when either says better at p < 0.05
  and neither says worse; else "tied".
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["ALPHA", "combine", "paired", "reciprocal", "temporal_anywhere"]

ALPHA = 0.05
FLIPS = 10_000
SEED = 31
NOT_FOUND = 10**6


def reciprocal(ranks: np.ndarray) -> np.ndarray:
    return np.where(ranks <= 50, 1.0 / np.maximum(ranks, 1), 0.0)


def _sign_flip(diff: np.ndarray) -> float:
    if not len(diff) or not np.any(diff):
        return 1.0
    rng = np.random.default_rng(SEED)
    observed = abs(diff.mean())
    signs = rng.choice(np.array([-1.0, 1.0]), size=(FLIPS, len(diff)))
    null = np.abs((signs * diff[None, :]).mean(axis=1))
    return float((1 + np.sum(null >= observed - 1e-12)) / (FLIPS + 1))


def _mcnemar(gained: int, lost: int) -> float:
    n = gained + lost
    if n == 0:
        return 1.0
    k = min(gained, lost)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return float(min(1.0, 2 * tail))


def paired(before: np.ndarray, after: np.ndarray) -> dict[str, Any]:
    """Both tests and the verdict for one benchmark's per-question ranks."""
    before, after = np.asarray(before), np.asarray(after)
    diff = reciprocal(after) - reciprocal(before)
    hit_b, hit_a = before <= 10, after <= 10
    gained, lost = int(np.sum(hit_a & ~hit_b)), int(np.sum(hit_b & ~hit_a))
    p_mrr, p_hit = _sign_flip(diff), _mcnemar(gained, lost)
    worse = (diff.mean() < 0 and p_mrr < ALPHA) or (lost > gained and p_hit < ALPHA)
    better = (diff.mean() > 0 and p_mrr < ALPHA) or (gained > lost and p_hit < ALPHA)
    verdict = "hurts" if worse else "helps" if better else "tied"
    return {"n": int(len(diff)), "mrr_delta": float(diff.mean()), "p_mrr": p_mrr,
            "hit10_gained": gained, "hit10_lost": lost, "p_hit10": p_hit, "verdict": verdict}


def combine(verdicts: Sequence[str]) -> bool:
    """On by default: hurts on no benchmark and helps on at least one."""
    return "hurts" not in verdicts and "helps" in verdicts


# The engine's rule for a question about time before issue 31's third round (time words
# anywhere in it), kept to score "before"; core/text.py holds the rule of now (they open
# the question).
_TEMPORAL_ANYWHERE = re.compile(
    r"\b(?:when|since\s+when|how\s+long|how\s+many\s+(?:days|weeks|months|years)|"
    r"what\s+(?:year|month|date|day|time|week|weekend)|which\s+(?:year|month|day|week))\b",
    re.IGNORECASE,
)


def temporal_anywhere(question: str) -> bool:
    return bool(_TEMPORAL_ANYWHERE.search(question))
