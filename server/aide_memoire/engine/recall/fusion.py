"""Fusion: a query's keyword and dense candidates into one score per row.

Pure functions over a :class:`Candidates` record, so that the cross-validation harness
(bench/locomo_cv.py) scores the very code recall runs, for many tunings, from one
retrieval per question. Every constant here was chosen by leave-one-conversation-out
cross-validation on the LOCOMO development split (docs/benchmarks.md), except where a
comment says why it could not be.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ..core.errors import InvalidInput
from ..core.text import QueryShape, states_time

__all__ = [
    "ADAPTIVE_SIGNALS", "COVERAGE_BASES", "DENSE_SCALES", "KEYWORD_SCALES", "KEYWORD_WEIGHTS",
    "Candidates",
    "RecallTuning", "dense_scores", "fuse", "keyword_coverage", "keyword_scores", "keyword_weight",
    "prefer_timed",
]

# bm25() column weights, in FTS_COLUMNS order. A turn's neighbours count for less than
# the turn itself (measured on the LOCOMO development split: docs/benchmarks.md).
KEYWORD_WEIGHTS: dict[str, float] = {
    "content": 1.0,
    "speaker": 1.0,
    "context": 0.5,
    "after": 0.25,
    "window": 0.3,
    "tags": 1.0,
    "dates": 1.0,
}


@dataclass(frozen=True)
class RecallTuning:
    """Recall's constants (fusion's chosen by cross-validation: docs/benchmarks.md).

    Every candidate is scored on both sides: a dense candidate outside the keyword list
    scores 0 there, so the keyword list is taken deep (its scores are cheap: FTS5 ranks
    every match anyway) and the dense side scores every row.

    fused = w * the keyword score (min-max of bm25 over the matches, or calibrated)
          + (1 - w) * min-max of the dense cosine over every row
          + speaker_boost if the query names exactly one speaker and the memory is theirs
          + agreement_bonus if both sides rank the memory in their first agreement_depth
    with w = identifier_keyword_weight for a query holding an identifier, else
    keyword_weight; then, for a question about time, timed_boost for each of the best
    timed_depth that states a time.
    """

    depth: int = 300
    keyword_depth: int = 2000
    keyword_weight: float = 0.55
    speaker_boost: float = 0.25
    # Not chosen on LOCOMO (no question there holds an identifier): an identifier is
    # matched exactly or not at all, and the dense model reads "XJ-4471" as noise, so
    # the keyword side leads. Pinned by tests/engine/recall/recaller/test_query_shapes.py.
    identifier_keyword_weight: float = 0.75
    # Off: cross-validation chose a bonus (0.05) in some folds, none on all data, and
    # its held-out figures are better without it.
    agreement_bonus: float = 0.0
    agreement_depth: int = 3
    timed_boost: float = 0.2
    timed_depth: int = 50
    # Feedback from the retrievers' own best rows: words shared by at least two of the
    # best `feedback_docs` of each side (not in the query) form a second keyword query,
    # whose min-max score is added with `feedback_weight`. 0 docs: off (no extra query).
    # Off by default: under CV it adds +0.010 hit@10, +0.016 MRR on LOCOMO but doubles
    # the keyword side's cost (a second FTS5 query over every match); chosen under CV,
    # when on: 5 rows, 8 words, weight 0.1 (docs/benchmarks.md).
    feedback_docs: int = 0
    feedback_terms: int = 8
    feedback_weight: float = 0.0
    # A speaker's name matches nearly every turn of their conversation (and, store-wide,
    # only that conversation): the boost above handles it, BM25 gets the other words.
    names_in_keyword_query: bool = False
    # The same for the dense side: a turn is encoded with its speaker's name, so a query
    # naming a speaker is nearest to whatever that speaker said, small talk included.
    # False (the default): the names the speaker boost handles leave the query the model
    # encodes. Chosen by leave-one-conversation-out CV in every fold of both conversation
    # benchmarks: LOCOMO hit@10 0.892 -> 0.898, MRR 0.623 -> 0.635; personas hit@10
    # 0.775 -> 0.963, MRR 0.624 -> 0.785 (docs/benchmarks.md, issue 31).
    names_in_dense_query: bool = False
    # The form of the query the model encodes: "asked", as typed; "statement", without its
    # interrogative opening ("why did", "would", "what kind of": recall/query_form.py), so
    # the query sits nearer to the statement that answers it (issue 31: docs/benchmarks.md).
    # "asked" by the rule: the statement form hurts LOCOMO under CV (MRR -0.014, p 0.002)
    # and lowers dense alone on the paraphrase set (hit@1 26 -> 25 of 48).
    dense_query_form: str = "asked"
    # In a store of more than prune_above rows, a word found in more than this share of
    # it (and at least common_floor rows) adds little to BM25 but makes FTS5 rank every
    # row holding it: such words only count together (see Recaller._keyword_match).
    prune_above: int = 5_000
    common_share: float = 0.01
    common_floor: int = 1000
    # ... and at most this many rows: 1% of a million is 10k rows, each scored by FTS5
    # for a word called "rare". Changes nothing up to 500k rows (issue 28).
    common_cap: int = 5000
    # Namespaces bigger than this are ranked by the sign bits of their vectors first, and
    # only the best `shortlist` rows (and every keyword match) get an exact cosine: the
    # float scan is memory-bound (154 MB at 100k rows). None: always exact.
    shortlist_above: int | None = 20_000
    shortlist: int = 3000
    keyword_weights: dict[str, float] = field(default_factory=lambda: dict(KEYWORD_WEIGHTS))
    # How the keyword side is scaled to [0, 1] (see keyword_scores): "minmax" over the
    # matches; "ideal", each row's bm25 over that of a row holding every query word
    # (engine/recall/calibrate.py); "scaled", min-max times the best row's share of that ideal.
    # "scaled" by default, with keyword_weight 0.55: under leave-one-conversation-out CV
    # on LOCOMO it raises hit@10 0.872 -> 0.889 (open-domain 0.593 -> 0.644, multi-hop
    # 0.801 -> 0.834) for an MRR change of -0.0015 (0.6229 -> 0.6214, well inside the
    # noise of 786 questions), and on the held-out paraphrase set, never tuned on, hit@1
    # goes 0.208 -> 0.438: min-max gave a distractor's partial keyword match full weight
    # whenever no row matched well (docs/benchmarks.md).
    keyword_scale: str = "scaled"
    # How the dense side is scaled: "namespace", between the query's lowest and highest
    # cosine over the namespace (its best row scores 1 however far it is); "cosine", the
    # cosine itself (fixed bounds 0 and 1, below 0 counts 0).
    dense_scale: str = "namespace"
    # Query-adaptive fusion: the keyword weight scaled by the share of the ideal bm25 the
    # best keyword row reaches (how much of the query's idf mass any row holds), up to
    # full weight at a share of adaptive_keyword: a paraphrase, whose words no row holds,
    # is ranked by meaning; a query whose words a row holds keeps its weight. 0.0: off;
    # 1.0: the weight times the share itself. On at 0.5 by the rule of docs/benchmarks.md
    # (issue 31, third round), with time questions known by their opening (core/text.py):
    # alone it helps the personas under leave-one-conversation-out CV (MRR +0.015, p 0.02)
    # and ties LOCOMO (MRR +0.003, p 0.22), every LOCOMO fold choosing 0.5 (the personas'
    # 1.0); with the name stage, 0.5 is better on both (LOCOMO MRR +0.008 against -0.006
    # at 1.0). Paraphrase set: fused hit@1 0.396 -> 0.542, equal to dense alone, either way.
    adaptive_keyword: float = 0.5
    # The session stage (engine/recall/stages.py): a turn gains session_weight times its
    # session's share of the best session (the sum of a session's session_top best turns
    # among the leading session_depth). 0: off: under CV it adds 0.004 hit@10 on LOCOMO
    # (every fold chose 0.1) but no fold of the persona benchmark chose it.
    session_weight: float = 0.0
    session_top: int = 2
    session_depth: int = 100
    # The recency stage for present-tense attribute questions (engine/recall/stages.py): the
    # leading recency_depth gain up to recency_weight by how late each was said. 0: off:
    # 0.2 (the tune half's choice, with named_weight 0.2) takes held-out conversational
    # updates "now" 18 -> 23 of 41, but costs multi-hop hit@1 on LOCOMO and the personas
    # under CV, where no fold chose it but one.
    recency_weight: float = 0.0
    recency_depth: int = 10
    # The name stage (engine/recall/stages.py): for a question answered by a name, the leading
    # named_depth candidates that name something gain named_weight. On (0.2, chosen in
    # every fold of both conversation benchmarks from 0 / 0.05 / 0.1 / 0.2) by the rule of
    # docs/benchmarks.md: with the speaker's name out of the dense query it helps LOCOMO
    # (hit@10 +8 -0 held out, p 0.008) and the personas (MRR +0.024, p 0.001).
    named_weight: float = 0.2
    named_depth: int = 50
    # The addressed stage (engine/recall/stages.py): when the query names one speaker, the
    # leading addressed_depth turns others said to someone ("you") gain addressed_weight.
    # 0: off: 0.1-0.3 added one "now" of 31 on the conversational updates' tune half.
    addressed_weight: float = 0.0
    addressed_depth: int = 50
    # The restatement stage (engine/recall/stages.py, weightless): for a present-tense
    # attribute question, the newest of the leading restated_depth turns about the subject
    # that restates an earlier one (a shared name, or words of change) goes first. 0: off:
    # it takes held-out conversational updates "now" 18 -> 34 of 41 at 10 (the tune half's
    # choice), but costs hit@1 on LOCOMO (0.492 -> 0.459) and the personas (0.696 ->
    # 0.667), and no fold of either chose it (docs/benchmarks.md, issue 31).
    restated_depth: int = 0
    # The time stage (engine/recall/stages.py): when the question names a time ("in May",
    # "last week"), the leading dated_depth candidates said within it gain dated_weight.
    # 0: off by the rule (docs/benchmarks.md, issue 31): tied on LOCOMO under CV (hit@10
    # +4 -0, p 0.13; MRR +0.002, p 0.23; every fold chose 0.1), and no persona question
    # names a time.
    dated_weight: float = 0.0
    dated_depth: int = 50
    # The name bridge (engine/recall/stages.py): the names the best bridge_from candidates
    # hold lift the other leading bridge_depth candidates holding them by bridge_weight.
    # 0: off: every fold of both conversation benchmarks chose 0 from 0-0.2.
    bridge_weight: float = 0.0
    bridge_from: int = 3
    bridge_depth: int = 50
    # The current-value stage (engine/recall/stages.py, weightless): for a present-tense
    # attribute question, a later session's turn about the subject naming another value
    # than a higher-ranked earlier one takes its place, among the leading current_depth.
    # 0: off: at 10 (the tune halves' choice) it adds 1-2 "now" per half of the
    # conversational update sets over the turn links alone, but costs the personas hit@1
    # (0.696 -> 0.625 in sample; no fold chose it), so it is opt-in (docs/benchmarks.md).
    current_depth: int = 0
    # The latest-statement stage (engine/recall/stages.py, weightless): for a present-tense
    # question about one attribute (not a series: core/kinds.py), when the leading
    # latest_depth candidates hold two or more that stand out (latest_z spreads above the
    # mean of the leading latest_pool) and state one thing about the subject, from
    # different sessions, the newest goes first. 0: off (docs/benchmarks.md, issue 31
    # round 9): every fold of LOCOMO and of the personas chooses 0 (in sample at 3, LOCOMO
    # hit@1 0.499 -> 0.496), and on the third update set's held-out half "now" stays 18 of
    # 30 while as_of falls 24 -> 19 (small talk of the later session stands out too).
    latest_depth: int = 0
    latest_pool: int = 20
    latest_z: float = 1.0
    # Dense pseudo-relevance feedback (Rocchio, recaller._dense_side): the query's vector
    # moved towards the mean of its dense_feedback_docs best rows' stored vectors, by
    # dense_feedback_weight, and the namespace scored again with it. 0 docs or weight 0:
    # off (one dense pass), by the rule (docs/benchmarks.md, issue 31 fourth round): it
    # hurts the paraphrase set at every setting tried (3 / 5 rows x 0.5 / 1.0: dense
    # hit@1 26 -> 21 / 17 / 19 / 10 of 48; the best rows it moves towards are same-topic
    # distractors) and no fold of the personas chose it.
    dense_feedback_docs: int = 0
    dense_feedback_weight: float = 0.0
    # The signal that scales the keyword weight down (query-adaptive fusion, with
    # adaptive_keyword): "coverage", the best keyword row's share of the ideal bm25 (see
    # keyword_weight) alone; the others keep that share or restore the full weight by a
    # second look (fusion._second_look): "margin", the share only when the dense side's
    # best row stands apart; "agreement", full weight when the keyword side's best row is
    # among the dense side's best; "unnamed", the share only for a query naming no speaker.
    # "coverage" by the rule (docs/benchmarks.md, issue 31 fourth round): "agreement"
    # hurts LOCOMO under CV (MRR -0.003, p 0.02), "margin" LOCOMO and the paraphrase set,
    # "unnamed" is tied on all three.
    adaptive_signal: str = "coverage"
    # What the coverage of query-adaptive fusion measures (keyword_coverage): "bm25", the
    # best keyword row's bm25 over the ideal row's; "terms", the largest share of the
    # query words' idf mass one of the best keyword rows' own text holds (stemmed as FTS5
    # does; engine/recall/held.py). bm25's share falls with the store's size and make-up
    # (every idf gains log N, and FTS5's average column lengths become the other rows'):
    # the same LOCOMO question weighs keyword 0.52 alone and 0.21 among 100k rows
    # (docs/benchmarks.md, issue 28 round 9). "terms" keeps it (0.49 / 0.51 on conv-26)
    # and narrows the gap among 100k rows on conv-26 and conv-41 (hit@10 +12 -3, p 0.04),
    # but on alone it hurts LOCOMO CV (MRR -0.005, p 0.04) and the personas (MRR -0.006,
    # p 0.02), no fold choosing it: "bm25" by the rule.
    coverage_basis: str = "bm25"


@dataclass
class Candidates:
    """What the retrievers found for one query, before any constant of fusion is applied.

    ``keyword``: -bm25 per matching row; ``dense``: cosine per row scored (the best
    ``depth`` and every keyword match), with the namespace's lowest and highest cosine;
    ``speaker_rows``: the candidates said by the one speaker the query names.
    """

    keyword: dict[int, float]
    dense: dict[int, float]
    dense_low: float = 0.0
    dense_high: float = 0.0
    dense_live: bool = False
    speaker_rows: set[int] = field(default_factory=set)
    shape: QueryShape = field(default_factory=QueryShape)
    feedback: dict[int, float] = field(default_factory=dict)
    # The bm25 a row holding every keyword-query word would get (0: not computed).
    keyword_ideal: float = 0.0
    # The largest share of the keyword-query words' idf mass that one of the best keyword
    # rows' text holds (None: not computed; see RecallTuning.coverage_basis).
    keyword_held: float | None = None

    def rows(self) -> set[int]:
        return set(self.keyword) | set(self.dense) | set(self.feedback)


def _minmax(values: Mapping[int, float]) -> dict[int, float]:
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    span = high - low
    if span <= 0:
        return {key: 1.0 for key in values}
    return {key: (value - low) / span for key, value in values.items()}


def _top(scores: Mapping[int, float], count: int) -> set[int]:
    return set(sorted(scores, key=lambda r: (-scores[r], r))[:count])


KEYWORD_SCALES = ("minmax", "ideal", "scaled")


def keyword_scores(found: Candidates, scale: str) -> dict[int, float]:
    """The keyword side in [0, 1]: min-max over the matches, or calibrated against the
    ideal row (capped at 1: a long row repeating the words may pass it)."""
    if scale == "minmax" or found.keyword_ideal <= 0 or not found.keyword:
        return _minmax(found.keyword)
    ideal = found.keyword_ideal
    if scale == "ideal":
        return {r: min(1.0, max(0.0, s / ideal)) for r, s in found.keyword.items()}
    if scale == "scaled":
        share = min(1.0, max(0.0, max(found.keyword.values()) / ideal))
        return {r: share * v for r, v in _minmax(found.keyword).items()}
    raise InvalidInput(f"unknown keyword scale {scale!r}: expected one of {KEYWORD_SCALES}")


DENSE_SCALES = ("namespace", "cosine")


def dense_scores(found: Candidates, scale: str) -> dict[int, float]:
    """The dense side: scaled by the namespace's cosine range, or the cosine itself."""
    if scale == "namespace":
        span = found.dense_high - found.dense_low or 1.0
        return {r: (s - found.dense_low) / span for r, s in found.dense.items()}
    if scale == "cosine":
        return {r: max(0.0, s) for r, s in found.dense.items()}
    raise InvalidInput(f"unknown dense scale {scale!r}: expected one of {DENSE_SCALES}")


COVERAGE_BASES = ("bm25", "terms")


def keyword_coverage(found: Candidates, basis: str = "bm25") -> float:
    """How much of the query the keyword side's best rows hold, in [0, 1] (1 when not
    known): the best row's bm25 over the ideal row's, or (basis "terms") the share of the
    query words' idf mass held (Candidates.keyword_held)."""
    if basis == "terms":
        if not found.keyword or found.keyword_held is None:
            return 1.0
        return min(1.0, max(0.0, found.keyword_held))
    if basis != "bm25":
        raise InvalidInput(f"unknown coverage basis {basis!r}: expected one of "
                           f"{COVERAGE_BASES}")
    if found.keyword_ideal <= 0 or not found.keyword:
        return 1.0
    return min(1.0, max(0.0, max(found.keyword.values()) / found.keyword_ideal))


def keyword_weight(found: Candidates, tuning: RecallTuning) -> float:
    """The keyword side's share of the fused score for this query."""
    if not found.dense_live:
        return 1.0
    if found.shape.identifier:
        return tuning.identifier_keyword_weight
    if tuning.adaptive_keyword > 0:
        share = min(1.0, keyword_coverage(found, tuning.coverage_basis)
                    / tuning.adaptive_keyword)
        if share < 1.0 and tuning.adaptive_signal != "coverage":
            share = _second_look(found, tuning.adaptive_signal, share)
        return tuning.keyword_weight * share
    return tuning.keyword_weight


ADAPTIVE_SIGNALS = ("coverage", "margin", "agreement", "unnamed")
# How many of each side's best rows the second looks read: the cut hit@10 is judged at.
_LOOK = 10


def _second_look(found: Candidates, signal: str, share: float) -> float:
    """The coverage share, kept or restored to 1 by a second signal (see RecallTuning):
    "agreement", full weight when the keyword side's best row is among the dense side's
    best ten (the words point where the meaning does); "margin", the share only when the
    dense side's best row stands apart (its lead over the second at least the second's
    over the tenth), full weight when the dense side cannot tell its best rows apart;
    "unnamed", the share only for a query that names no speaker (a question about what a
    speaker said keeps the full weight)."""
    if signal not in ADAPTIVE_SIGNALS:
        raise InvalidInput(f"unknown adaptive signal {signal!r}: expected one of "
                           f"{ADAPTIVE_SIGNALS}")
    if signal == "unnamed":
        return 1.0 if found.speaker_rows else share
    if not found.keyword or not found.dense:
        return share
    dense_best = sorted(found.dense, key=lambda r: (-found.dense[r], r))[:_LOOK]
    if signal == "agreement":
        keyword_best = max(found.keyword, key=lambda r: (found.keyword[r], -r))
        return 1.0 if keyword_best in dense_best else share
    values = [found.dense[r] for r in dense_best]
    if len(values) < 3:
        return share
    return share if values[0] - values[1] >= values[1] - values[-1] else 1.0


def fuse(found: Candidates, tuning: RecallTuning) -> dict[int, float]:
    """One score per candidate (see RecallTuning for the formula)."""
    keyword_norm = keyword_scores(found, tuning.keyword_scale)
    dense_norm = dense_scores(found, tuning.dense_scale)
    alpha = keyword_weight(found, tuning)
    fused = {
        r: alpha * keyword_norm.get(r, 0.0) + (1.0 - alpha) * dense_norm.get(r, 0.0)
        for r in found.rows()
    }
    if tuning.feedback_weight > 0 and found.feedback:
        for rowid, value in _minmax(found.feedback).items():
            fused[rowid] += tuning.feedback_weight * value
    if tuning.speaker_boost > 0:
        for rowid in found.speaker_rows:
            if rowid in fused:
                fused[rowid] += tuning.speaker_boost
    if tuning.agreement_bonus > 0 and found.keyword and found.dense:
        both = _top(found.keyword, tuning.agreement_depth) & _top(
            found.dense, tuning.agreement_depth
        )
        for rowid in both:
            fused[rowid] += tuning.agreement_bonus
    return fused


def prefer_timed(
    fused: dict[int, float],
    shape: QueryShape,
    tuning: RecallTuning,
    contents: Callable[[Iterable[int]], Mapping[int, str]],
) -> dict[int, float]:
    """For a question about time ("when did", "how long ago"), lift the best candidates
    whose text states a time: such a question is answered by a dated statement.

    ``contents`` gives the text of the rows asked (only the best ``timed_depth`` are).
    """
    if not shape.temporal or tuning.timed_boost <= 0 or not fused:
        return fused
    best = sorted(fused, key=lambda r: (-fused[r], r))[: tuning.timed_depth]
    text = contents(best)
    out = dict(fused)
    for rowid in best:
        if states_time(text.get(rowid, "")):
            out[rowid] += tuning.timed_boost
    return out
