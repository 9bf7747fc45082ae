"""Recall stages after fusion that read what a row is, not only how it scored.

Pure functions over fused scores and a ``RowFacts`` lookup (a row's session and time),
so that bench/locomo_cv.py scores the very code recall runs. Each is off while its
weight is 0 in ``RecallTuning``; which are on, and why, is in docs/benchmarks.md.

- ``lift_sessions``: a conversation's sessions scored as units (the best turns of each
  among the leading candidates); a turn of a strong session rises, so evidence spread
  over one session is found together.
- ``prefer_recent``: for a present-tense question about an attribute ("where does Sam
  work?"), the newer of the leading candidates rises: when a chat said one thing in
  spring and another in autumn, what holds now is the later. Questions asking for a
  series ("what pets", "who are her friends") and about the past are left alone.
- ``prefer_named``: a question answered by a name ("which company", "where", "who")
  prefers the leading turns that name something over small talk.
- ``lift_addressed``: when a question names one speaker, what the others say *to* them
  ("how is the new job at Brightleaf treating you?") is about them too: such turns gain
  a share of what the named speaker's own turns gain.
- ``prefer_restated``: for a present-tense attribute question, a later turn about the
  subject that restates an earlier one (the two share a name, or the later says that
  something changed: "since we migrated from Linear to Jira", "not anymore, I'm team
  lead") goes first: weightless, a reordering of the leading candidates, never a score
  added to rows that state nothing new.
- ``prefer_latest``: for a present-tense question about one attribute, when two or more
  of the leading candidates stand out from the rest, each states one thing about the
  subject and replaces something (not "also", "still", nor one of a set: a second pet,
  another friend), and they come from different sessions, the newest goes first: the
  two answer the same question, and what holds now was said last. With ``as_of`` recall
  sees only the turns said by then, so the latest of those goes first.
- ``prefer_dated``: a question that names a time ("in May", "last week", "two years
  ago": recall/question_time.py) lifts the leading candidates said within it.
- ``bridge_names``: a second hop: the names the best few candidates hold (not the
  question's own words, not the speakers) lift the leading candidates that hold them
  too, so a question about "her sister's trip" reaches the turn naming the trip after the
  turn naming the sister.
- ``prefer_current``: for a present-tense attribute question, a later session's turn about
  the subject that names another value where an earlier leading turn named one (the
  earlier names something, the later names something else: "I live in Tampere" / "No,
  we're in Porto now") takes the earlier's place, which it leads by the least step:
  the reading turn links make at write time (engine/facts/turns.py), applied among the
  leading candidates when no link exists. Nothing else moves.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.kinds import set_classes
from ..core.text import QueryShape, states_time
from .question_time import question_window

if TYPE_CHECKING:
    from .fusion import RecallTuning

__all__ = ["RowFact", "RowFacts", "bridge_names", "lift_addressed", "lift_sessions",
           "prefer_current", "prefer_dated", "prefer_latest", "prefer_named", "prefer_recent",
           "prefer_restated"]


@dataclass(frozen=True)
class RowFact:
    """What the stages read of a row: its session (namespace-qualified), its time."""

    session: str | None
    at: float | None  # seconds since the epoch: observed time, else created time
    named: bool = False  # the text names something (text.names_something)
    speaker: str | None = None
    addresses: bool = False  # the text speaks to someone ("you", "your")
    changes: bool = False  # the text says something changed (text.states_change)
    names: frozenset[str] = frozenset()  # the names it holds (text.named_words)
    words: int = 0  # its content words (text.content_words): over 14, several statements
    adds: bool = False  # it only adds or keeps a value (kinds.only_adds): replaces nothing
    said: str = ""  # its text, case-folded, spaces collapsed: a word-for-word repeat


RowFacts = Callable[[Iterable[int]], Mapping[int, RowFact]]


def _best(fused: Mapping[int, float], count: int) -> list[int]:
    return sorted(fused, key=lambda r: (-fused[r], r))[:count]


def lift_sessions(
    fused: dict[int, float], facts: RowFacts, tuning: RecallTuning
) -> dict[int, float]:
    """Each leading turn gains ``session_weight`` times its session's share of the best
    session's score (a session scores the sum of its ``session_top`` best turns among
    the leading ``session_depth`` candidates). Rows without a session are unchanged."""
    if tuning.session_weight <= 0 or not fused:
        return fused
    best = _best(fused, tuning.session_depth)
    known = facts(best)
    members: dict[str, list[float]] = {}
    for rowid in best:
        fact = known.get(rowid)
        if fact is not None and fact.session is not None:
            members.setdefault(fact.session, []).append(max(0.0, fused[rowid]))
    if len(members) < 2:
        return fused  # one session (or none): nothing to tell apart
    score = {s: sum(sorted(v, reverse=True)[: tuning.session_top]) for s, v in members.items()}
    high = max(score.values()) or 1.0
    out = dict(fused)
    for rowid in best:
        fact = known.get(rowid)
        if fact is not None and fact.session is not None:
            out[rowid] += tuning.session_weight * score[fact.session] / high
    return out


def prefer_recent(
    fused: dict[int, float], shape: QueryShape, facts: RowFacts, tuning: RecallTuning
) -> dict[int, float]:
    """For a present-tense attribute question, the leading ``recency_depth`` candidates
    gain up to ``recency_weight``, in proportion to how late they were said between the
    earliest and the latest of them (scale-free in time: months or minutes apart)."""
    if tuning.recency_weight <= 0 or not shape.present or not fused:
        return fused
    best = _best(fused, tuning.recency_depth)
    known = facts(best)
    times = {r: f.at for r in best if (f := known.get(r)) is not None and f.at is not None}
    if len(times) < 2:
        return fused
    early, late = min(times.values()), max(times.values())
    if late <= early:
        return fused
    out = dict(fused)
    for rowid, at in times.items():
        out[rowid] += tuning.recency_weight * (at - early) / (late - early)
    return out


def prefer_named(
    fused: dict[int, float], shape: QueryShape, facts: RowFacts, tuning: RecallTuning
) -> dict[int, float]:
    """For a question answered by a name, the leading ``named_depth`` conversation turns
    that name something gain ``named_weight``. Turns only: small talk ("Love that!")
    is what the stage tells apart, and only conversations chose it; among notes, which
    nearly all name something, it lifted distractors (docs/benchmarks.md, issue 31)."""
    if tuning.named_weight <= 0 or not shape.asks_name or not fused:
        return fused
    best = _best(fused, tuning.named_depth)
    known = facts(best)
    out = dict(fused)
    for rowid in best:
        fact = known.get(rowid)
        if fact is not None and fact.named and fact.speaker is not None:
            out[rowid] += tuning.named_weight
    return out


def lift_addressed(
    fused: dict[int, float], speaker_rows: set[int], facts: RowFacts, tuning: RecallTuning
) -> dict[int, float]:
    """When the query names one speaker (``speaker_rows``: the candidates they said), the
    leading ``addressed_depth`` candidates said by someone else to someone ("you") gain
    ``addressed_weight``."""
    if tuning.addressed_weight <= 0 or not speaker_rows or not fused:
        return fused
    best = [r for r in _best(fused, tuning.addressed_depth) if r not in speaker_rows]
    known = facts(best)
    out = dict(fused)
    for rowid in best:
        fact = known.get(rowid)
        if fact is not None and fact.speaker is not None and fact.addresses:
            out[rowid] += tuning.addressed_weight
    return out


def _about(rowid: int, fact: RowFact, speaker_rows: set[int]) -> bool:
    """A turn is about the one speaker a query names when they said it or it speaks to
    someone (in a chat, to them); with no speaker named, every turn is."""
    return not speaker_rows or rowid in speaker_rows or fact.addresses


def prefer_restated(
    fused: dict[int, float], shape: QueryShape, speaker_rows: set[int], facts: RowFacts,
    tuning: RecallTuning,
) -> dict[int, float]:
    """For a present-tense attribute question, among the leading ``restated_depth``
    candidates about the subject, the newest turn that restates an earlier one of another
    session (it shares a name with it, or says that something changed) is put first.

    Scale-free: the turn takes the best leading score (plus the least step that keeps
    the order strict), whatever the scores are; nothing moves without such a pair, so a
    series that only adds ("we adopted a cat as well") is asked by a question that is
    not present-tense, and two unrelated turns do not pair.
    """
    if tuning.restated_depth <= 0 or not shape.present or not fused:
        return fused
    best = _best(fused, tuning.restated_depth)
    known = facts(best)
    about = [(r, f) for r in best if (f := known.get(r)) is not None and f.at is not None
             and f.session is not None and _about(r, f, speaker_rows)]
    newest: tuple[float, int] | None = None
    for rowid, fact in about:
        assert fact.at is not None
        restates = any(
            other.session != fact.session and other.at is not None and other.at < fact.at
            and (fact.changes or bool(fact.names & other.names))
            for _, other in about
        )
        if restates and (newest is None or fact.at > newest[0]):
            newest = (fact.at, rowid)
    if newest is None:
        return fused
    out = dict(fused)
    top = fused[best[0]]
    out[newest[1]] = max(fused[newest[1]], math.nextafter(top, math.inf))
    return out


def prefer_dated(
    fused: dict[int, float], query: str, facts: RowFacts, tuning: RecallTuning
) -> dict[int, float]:
    """When the question names a time, the leading ``dated_depth`` candidates said within
    it gain ``dated_weight`` (the window read against the newest of them)."""
    if tuning.dated_weight <= 0 or not fused:
        return fused
    best = _best(fused, tuning.dated_depth)
    known = facts(best)
    times = {r: f.at for r in best if (f := known.get(r)) is not None and f.at is not None}
    if not times:
        return fused
    window = question_window(query, max(times.values()))
    if window is None:
        return fused
    start, end = window
    out = dict(fused)
    for rowid, at in times.items():
        if start <= at < end:
            out[rowid] += tuning.dated_weight
    return out


def bridge_names(
    fused: dict[int, float], asked: set[str], facts: RowFacts, tuning: RecallTuning
) -> dict[int, float]:
    """The names held by the best ``bridge_from`` candidates, less ``asked`` (the
    question's words, case-folded) and the speakers' names, lift each other leading
    ``bridge_depth`` candidate holding one of them by ``bridge_weight``."""
    if tuning.bridge_weight <= 0 or not fused:
        return fused
    best = _best(fused, tuning.bridge_depth)
    known = facts(best)
    speakers = {w for f in known.values() if f.speaker for w in f.speaker.casefold().split()}
    seeds = best[: tuning.bridge_from]
    names: set[str] = set()
    for rowid in seeds:
        if (fact := known.get(rowid)) is not None:
            names |= fact.names
    names -= asked | speakers
    if not names:
        return fused
    out = dict(fused)
    for rowid in best[tuning.bridge_from:]:
        fact = known.get(rowid)
        if fact is not None and fact.names & names:
            out[rowid] += tuning.bridge_weight
    return out


# A text of more words than this holds several statements (as the write path's bound).
_ONE_STATEMENT = 14


def _values(fact: RowFact, people: frozenset[str]) -> frozenset[str]:
    return frozenset(n for n in fact.names if not any(p.startswith(n) for p in people))


def prefer_current(
    fused: dict[int, float], shape: QueryShape, speaker_rows: set[int], facts: RowFacts,
    tuning: RecallTuning,
) -> dict[int, float]:
    """For a present-tense attribute question, among the leading ``current_depth``
    candidates about the subject, a turn of a later session that names another value
    where a higher-ranked earlier one named one takes that one's place (the newest such
    turn first); weightless, as a link's replacement ranks. Both must state one thing
    (at most 14 content words)."""
    if tuning.current_depth <= 0 or not shape.present or not fused:
        return fused
    best = _best(fused, tuning.current_depth)
    known = facts(best)
    people = frozenset(w for f in known.values() if f.speaker
                       for w in f.speaker.casefold().split())
    about = [(r, f) for r in best if (f := known.get(r)) is not None and f.at is not None
             and f.session is not None and 0 < f.words <= _ONE_STATEMENT
             and _about(r, f, speaker_rows)]
    out = dict(fused)
    for index, (rowid, fact) in enumerate(about):
        had = _values(fact, people)
        if not had:
            continue
        later = [(f.at, r) for r, f in about[index + 1:]
                 if f.session != fact.session and f.at is not None and fact.at is not None
                 and f.at > fact.at and _values(f, people) - had]
        if later:
            newest = max(later)[1]
            out[newest] = max(out[newest], math.nextafter(out[rowid], math.inf))
            return out  # the leading pair decides; the rest keep their order
    return out


def prefer_latest(
    fused: dict[int, float], shape: QueryShape, query: str, speaker_rows: set[int],
    facts: RowFacts, tuning: RecallTuning,
) -> dict[int, float]:
    """For a present-tense question about one attribute (not a series: the question
    speaks of no set-valued class, core/kinds.py; and it names no time), the candidates
    among the leading ``latest_depth`` that stand out (at least ``latest_z`` spreads
    above the mean score of the leading ``latest_pool``), state one thing (at most 14
    content words), do not only add, are not said word for word elsewhere among the
    leading ``latest_pool``, and are about the subject: when they come from two or more
    sessions, the newest takes the best leading score (plus the least step). Weightless
    and scale-free, like a link's replacement; nothing moves without such a pair."""
    if (tuning.latest_depth <= 0 or not shape.present or len(fused) < 3 or set_classes(query)
            or states_time(query)):
        return fused  # not about now: a series, or a time named ("as of May", "in 2022")
    pool = _best(fused, tuning.latest_pool)
    scores = [fused[r] for r in pool]
    mean = sum(scores) / len(scores)
    spread = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
    if spread <= 0:
        return fused
    best = pool[: tuning.latest_depth]
    known = facts(pool)
    # A text said word for word more than once ("I'm trying to cook more at home.")
    # restates a formula; it changes nothing.
    said = [f.said for f in known.values() if f.said]
    repeated = {text for text in said if said.count(text) > 1}
    standing = [(f.at, r, f.session) for r in best
                if (fused[r] - mean) / spread >= tuning.latest_z
                and (f := known.get(r)) is not None and f.at is not None
                and f.session is not None and 0 < f.words <= _ONE_STATEMENT
                and not f.adds and f.said not in repeated and _about(r, f, speaker_rows)]
    if len({session for _, _, session in standing}) < 2:
        return fused
    newest = max(standing)[1]
    if newest == best[0]:
        return fused
    out = dict(fused)
    out[newest] = math.nextafter(fused[best[0]], math.inf)
    return out
