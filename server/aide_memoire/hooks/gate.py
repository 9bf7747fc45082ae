"""The prompt hook's gate: which recalled memories are worth putting before a prompt.

A recall always returns its best hits, related or not, and its fused scores are min-max
scaled within the call, so they cannot say "unrelated". The gate reads signals that keep
their meaning across calls, all of which recall and its dense profile have computed from
the one encoding of the prompt (prompt.py builds the candidates):

- the raw dense cosine of prompt and memory (``Hit.scores["dense"]``), put on an
  absolute scale for this model: ``calibrated`` is the probability that a pair at this
  cosine is related, a logistic fit on related and unrelated pairs (Platt scaling);
- the lexical overlap: the share of the prompt's content words the memory holds;
- the fused rank (1 = recall's best) and the margin of the hit's cosine over the best
  cosine of the other hits, which says "this one stands out" where a flat list of
  near-equal cosines says "nothing here is about this";
- the kind (a session turn is a weaker memory than a stored learning);
- ``z``, the cosine in standard deviations above the prompt's cosine to the whole
  namespace: recorded, not weighed (under CV it did not separate related prompts from
  unrelated ones on this model; docs/hooks.md).

They add up on the cosine's own scale, ``cosine + w_overlap * overlap + w_margin *
max(margin, 0)``, and a hit passes when that reaches ``threshold``. A weighted sum with
three constants rather than a learned model: the tuning material holds a few hundred
prompts, and a rule a person can read in the injection log is worth more than a point
of fit. Kind and recency get no weight of their own: recall's order already weighs
recency and feedback, and the material could not fit a kind weight (LOCOMO is all
turns); the kind is recorded with every decision. Every constant lives in
``GateTuning`` and was chosen by
bench/hook_quality.py (cross-validated on the tuning half of the fixture corpora and on
LOCOMO dev; docs/hooks.md has the held-out figures); two more, a memory's best clause
(clauses.py) and a lower floor for memories after the first, were measured and are off.
Without the model (keyword-only installs, the hook process) the gate is lexical: the
overlap must reach ``lexical_floor``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..engine.core.text import query_terms, tokens

__all__ = [
    "Decision",
    "GateReason",
    "GateTuning",
    "Query",
    "Signals",
    "calibrated",
    "companion_floor",
    "decide",
    "overlap",
    "prompt_stems",
    "relevance",
    "score",
    "signals",
    "stem",
]

TERMS_CAP = 4
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "es", "ed", "ly", "s")

Decision = Literal["injected", "below_gate", "over_budget", "over_count", "seen", "own_session"]
GateKind = Literal["dense", "lexical"]
# What the signals were read against: the prompt alone, or the session's last user
# turn(s) with the prompt (GateTuning.context_terms).
Query = Literal["prompt", "context"]


def stem(word: str) -> str:
    """A crude suffix strip, enough to match 'deploys' to 'deploy' and 'migrated' to 'migrate'."""
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _stems(words: Iterable[str]) -> set[str]:
    return {stem(w) for w in words if len(w) > 2 or w.isdigit()}


def prompt_stems(prompt: str) -> set[str]:
    """The content words of a prompt (stop words out), stemmed."""
    return _stems(query_terms(prompt))


def overlap(terms: set[str], text: str) -> float:
    """Share of the prompt's content words (at most TERMS_CAP counted) found in ``text``."""
    if not terms:
        return 0.0
    found = len(terms & _stems(tokens(text)))
    return min(found / min(len(terms), TERMS_CAP), 1.0)


@dataclass(frozen=True)
class GateTuning:
    """The gate's constants (bench/hook_quality.py chose them; docs/hooks.md says how)."""

    # Platt scaling of the raw MiniLM cosine, P(related | cosine): the calibrated value
    # the injection log shows beside the cosine.
    cosine_slope: float = 5.48
    cosine_offset: float = -2.388
    # The gate's value: cosine + w_overlap * overlap + w_margin * max(margin, 0).
    w_overlap: float = 0.2
    w_margin: float = 1.0
    threshold: float = 0.65
    # Keyword-only: the overlap a memory must reach.
    lexical_floor: float = 0.65
    # How many memories at most go in before one prompt.
    max_memories: int = 3
    # The clause cosine: how far a memory's best clause raises its cosine
    # (cosine + w_clause * max(clause - cosine, 0)), and for how many of the best
    # candidates (by the value without it) the clauses are encoded. Off: on round 7's
    # held-out half it added nothing (docs/hooks.md), and it costs encodings per prompt.
    w_clause: float = 0.0
    clause_candidates: int = 5
    # The first memory to go in must reach ``threshold`` (whether the prompt is about
    # anything in memory at all); each further one must reach threshold - companion_gap
    # on its own. 0: every memory on the threshold (a gap nearly doubled the tokens for
    # one more held-out prompt of 193; docs/hooks.md).
    companion_gap: float = 0.0
    # Late interaction (late.py): the prompt's MaxSim to a memory's token vectors, read
    # for the ``late_candidates`` best candidates (by the value without it) and added as
    # w_late * max(late - late_offset, 0). Off by default unless docs/hooks.md says the
    # held-out half gained.
    w_late: float = 0.0
    late_offset: float = 0.0
    late_candidates: int = 5
    # The peak: how far the cosine stands above the prompt's ``gap_rank``-th densest row
    # of the namespace (a prompt nothing is about has a flat top), added as
    # w_gap * max(gap, 0). Off by default unless docs/hooks.md says the held-out half
    # gained; ``gap_rank`` is at most prompt.DENSE_CANDIDATES (the rows read).
    w_gap: float = 0.0
    gap_rank: int = 10
    # The spread: the standard deviation of the prompt's cosine to every row of the
    # namespace (a prompt about something stored has a heavier top tail than one about
    # nothing), added as w_spread * spread to every candidate of the prompt. Off unless
    # docs/hooks.md says the held-out half gained.
    w_spread: float = 0.0
    # The session's context, for a vague follow-up ("same error as before"): a prompt of
    # at most ``context_terms`` content words (0: never) is asked again with the running
    # session's last ``context_turns`` user turns before it, and a candidate of that
    # second query goes in when its value there reaches ``context_threshold`` (the
    # prompt's own candidates keep ``threshold``). Off unless docs/hooks.md says the
    # held-out half gained.
    context_terms: int = 0
    context_threshold: float = 0.65
    context_turns: int = 1


@dataclass(frozen=True)
class Signals:
    """What the gate reads of one hit (all computed by recall already)."""

    id: str
    kind: str
    dense: float | None
    overlap: float
    rank: int
    margin: float
    # The cosine in standard deviations above the prompt's cosine to every row of the
    # namespace (None without the model's dense profile): shown, not thresholded.
    z: float | None = None
    # The prompt's best cosine to one clause of the memory (clauses.py); None for a
    # memory of one clause, one the clauses were not read for, or without the model.
    clause: float | None = None
    # The prompt's MaxSim to the memory's token vectors (late.py); None where not read.
    late: float | None = None
    # The memory's place among the prompt's densest rows of the namespace (1 = the
    # densest); None beyond the dense list read, or without the model.
    dense_rank: int | None = None
    # The cosine minus the prompt's ``GateTuning.gap_rank``-th densest cosine of the
    # namespace (None without the model's dense profile).
    gap: float | None = None
    # The standard deviation of the prompt's cosine over the namespace (None without it).
    spread: float | None = None


@dataclass(frozen=True)
class GateReason:
    """Why one memory went in (or not): the signals, the gate's value, the decision."""

    id: str
    kind: str
    gate: GateKind
    dense: float | None
    calibrated: float | None
    overlap: float
    rank: int
    margin: float
    score: float
    decision: Decision
    z: float | None = None
    clause: float | None = None
    late: float | None = None
    gap: float | None = None
    spread: float | None = None
    query: Query = "prompt"


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def calibrated(cosine: float, tuning: GateTuning) -> float:
    """P(related | cosine) on this model's absolute scale."""
    return _sigmoid(tuning.cosine_slope * cosine + tuning.cosine_offset)


def signals(
    ids: Sequence[str],
    kinds: Sequence[str],
    cosines: Sequence[float | None],
    overlaps: Sequence[float],
) -> list[Signals]:
    """Each hit's signals, in recall's order (rank 1 first).

    The margin is the hit's cosine minus the best cosine of the other hits: positive for
    the one that stands out, near 0 when many are alike (as for a prompt nothing in the
    store is about), negative for the rest; 0 without cosines.
    """
    out: list[Signals] = []
    known = [c for c in cosines if c is not None]
    for i, (memory_id, kind, cosine, lexical) in enumerate(
        zip(ids, kinds, cosines, overlaps, strict=True)
    ):
        margin = 0.0
        if cosine is not None and len(known) > 1:
            others = sorted(known, reverse=True)
            best_other = others[1] if cosine >= others[0] else others[0]
            margin = cosine - best_other
        out.append(Signals(memory_id, kind, cosine, lexical, i + 1, margin))
    return out


def relevance(s: Signals, tuning: GateTuning) -> float:
    """The memory's cosine, raised toward its best clause's when that is higher."""
    assert s.dense is not None
    if s.clause is None:
        return s.dense
    return s.dense + tuning.w_clause * max(s.clause - s.dense, 0.0)


def score(s: Signals, tuning: GateTuning) -> float:
    """The gate's value for one hit: on the cosine's scale with the model, the overlap
    without it."""
    if s.dense is None:
        return s.overlap
    value = (relevance(s, tuning) + tuning.w_overlap * s.overlap
             + tuning.w_margin * max(s.margin, 0.0))
    if s.late is not None and tuning.w_late > 0:
        value += tuning.w_late * max(s.late - tuning.late_offset, 0.0)
    if s.gap is not None and tuning.w_gap > 0:
        value += tuning.w_gap * max(s.gap, 0.0)
    if s.spread is not None and tuning.w_spread > 0:
        value += tuning.w_spread * s.spread
    return value


def companion_floor(tuning: GateTuning) -> float:
    """What a memory must reach to go in beside a first one that reached the threshold."""
    return tuning.threshold - max(tuning.companion_gap, 0.0)


def decide(s: Signals, tuning: GateTuning) -> GateReason:
    """Whether one hit passes the gate on its own (before the first-memory rule,
    budget, count and session rules): its value reaches the companion floor."""
    value = score(s, tuning)
    if s.dense is None:
        passed = value >= tuning.lexical_floor
        return GateReason(s.id, s.kind, "lexical", None, None, s.overlap, s.rank, s.margin,
                          round(value, 4), "injected" if passed else "below_gate")
    passed = value >= companion_floor(tuning)
    return GateReason(s.id, s.kind, "dense", round(s.dense, 4),
                      round(calibrated(s.dense, tuning), 4), s.overlap, s.rank,
                      round(s.margin, 4), round(value, 4),
                      "injected" if passed else "below_gate",
                      None if s.z is None else round(s.z, 3),
                      None if s.clause is None else round(s.clause, 4),
                      None if s.late is None else round(s.late, 4),
                      None if s.gap is None else round(s.gap, 4),
                      None if s.spread is None else round(s.spread, 4))
