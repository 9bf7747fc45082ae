"""Turn links: a later session's turn that restates an attribute of the same person with
a different value supersedes the earlier turn (issue #31, item 5).

Conversation says a change in passing, by the other speaker, or as a reply ("So Kestrel
Labs hired you!", "Nope, Bilbao since the spring"), rarely with the old statement's words,
so the general path (updates.py, shared index terms and change words) links few of them.
This path reads structure instead of a lexicon:

- **subject**: who a turn is about. First person is its speaker; the second person, in a
  question or with no first person, is the one spoken to (the other participant of a
  two-person session, else the nearest earlier speaker); a bare statement ("Finally
  unpacked the last boxes here") is its speaker's, and so is a question without either
  ("How's the move to Leipzig going?") unless ``TurnTuning.asked`` (off) reads it as
  the one asked's.
- **frame**: the turn's stored vector against the earlier sessions' turns (the vectors
  the write computed; nothing is encoded again). The candidate is the nearest turn about
  the same subject; it must stand out from the whole pool (its cosine ``z`` spreads above
  the pool's mean), so a turn near everything (small talk) links nothing.
- **values**: the two differ both ways in their content words (a restatement says
  nothing new), and the newer does not say it adds ("also", "as well", "another", a
  closing "too") or that the old value holds ("still"): scope.py's grammatical markers.
  And they share a frame: the newer names the old value beside the new one, or a
  content word of the two is the same once the values are masked.
- **sets**: attributes held many at once (kin, friends, pets, pastimes, languages,
  places been: word classes of kinds of attribute, ``_SET_CLASSES``) never link: two
  turns about one of them name two members ("My son Leo" / "My daughter Mia").
- **cue path** (``TurnTuning.cue_z``, off by default): a value without a name ("team
  lead", "engaged to Elias" after "dating Elias") links when the newer says it changed
  ("now", "no longer", a change word) and its nearest turn stands out by ``cue_z``.

A link names the newer in the older's ``superseded_by`` (both stay active: a turn is a
record of what was said), with a ``memory_updates`` row (rule ``turn``) and an audit
event. ``as_of`` before the newer still finds the older (the newer was not yet valid);
recall moves the newer into the older's place only for a question about the present
(adjust.py). Bounded per write: one indexed query for the latest ``pool`` earlier turns
of the namespace per session written, their vectors read once and cached.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.kinds import CONTINUES, EXTENDS, set_classes, stem
from ..core.text import STOP_WORDS, content_words, named_words, tokens
from ..storage.portable.updates import earlier_turns, embeddings_by_rowid
from .aspects import STRONG_CUES

if TYPE_CHECKING:
    from ..storage.protocol import Connection

__all__ = ["TurnLinks", "TurnTuning", "changed", "says_change", "subjects", "swapped", "values"]

_CACHE = 50_000


@dataclass(frozen=True)
class TurnTuning:
    """Chosen on the tune halves of tests/facts/conversational_updates*.json (docs/facts.md)."""

    pool: int = 400  # latest earlier-session turns of the namespace compared per session
    z: float = 1.0  # how many spreads above the pool's mean cosine the candidate must be
    min_pool: int = 8  # fewer earlier turns than this: no spread to stand out from
    max_words: int = 14  # longer turns hold several statements (as UpdateTuning.max_words)
    # A value without a name (a role, a habit, "engaged to" after "dating"): the newer
    # must say it changed (a change word, "now", "these days", "not anymore") and its
    # nearest turn about the person stand out by this many spreads. None: off.
    cue_z: float | None = None
    # A question without "I" or "you" is about the one asked, not the asker (subjects'
    # ``asked``). Off: on the sets' held-out halves it links nothing more (docs/facts.md).
    asked: bool = False


# What says a value changed, when no name shows it: aspects' strong change words, the
# present set against a past ("now", "these days", "nowadays"), and the phrases of an end.
_CHANGE = re.compile(r"\b(?:now|nowadays|these days|no longer|not any ?more|instead of|"
                     r"rather than|gave up|given up)\b", re.I)


def says_change(text: str) -> bool:
    """Whether ``text`` says that something changed (the cue path's only lexicon)."""
    return bool(_CHANGE.search(text)) or any(t in STRONG_CUES for t in tokens(text))


_FIRST = re.compile(r"\b(?:i|me|my|mine|myself|we|us|our|ours|ourselves)\b|\bi['’]", re.I)
_SECOND = re.compile(r"\b(?:you|your|yours|yourself)\b", re.I)


@dataclass(frozen=True)
class Turn:
    rowid: int
    id: str
    speaker: str
    session: str
    position: int
    at: str
    content: str
    superseded_by: str | None = None


def subjects(text: str, speaker: str, addressee: str | None, *,
             asked: bool = False) -> frozenset[str]:
    """Who ``text``, said by ``speaker`` to ``addressee``, is about (see the module doc).
    ``asked`` (``TurnTuning.asked``): a question without first person is about the one
    asked ("How's the move to Leipzig going?", "Is the Golf still making that noise?")."""
    first, second = bool(_FIRST.search(text)), bool(_SECOND.search(text))
    question = text.rstrip().endswith("?")
    if addressee is not None and (second or (asked and question and not first)):
        if first and not question:
            return frozenset([speaker, addressee])
        return frozenset([addressee])
    return frozenset([speaker])


def values(text: str, people: frozenset[str]) -> frozenset[str]:
    """The names a turn states (capitalised words inside a sentence), without the
    conversation's people: their names, and the short forms of them ("Mel")."""
    return frozenset(n for n in named_words(text)
                     if not any(p == n or p.startswith(n) for p in people))


# "a new friend", "a second class": one more of a kind the older turn already had.
_ONE_MORE = re.compile(r"\ban?\s+(?:new|second|third|fourth|further|other)\s+([^\W\d_][\w'’-]*)",
                       re.I)


# "a new friend", "her second kitten": one more member of a set, whatever was named before.
_ONE_MORE_OF_A_SET = re.compile(
    r"\b(?:new|second|third|fourth|fifth|other|another|youngest|eldest|oldest|newest)"
    r"\s+([^\W\d_][\w'’-]*)", re.I)


# Words of one occasion: a turn that reports what happened tonight or yesterday tells of
# an event, and events recur with other people and places; an attribute holds over time.
_OCCASION = re.compile(r"\b(?:tonight|today|yesterday|last night|this (?:morning|afternoon|"
                       r"evening|weekend))\b", re.I)


def adds_one_more(old: str, new: str) -> bool:
    """Whether ``new`` introduces one more of something ``old`` names ("My friend Ana" /
    "I made a new friend, Bo"), or one more member of a set-valued attribute ("a second
    kitten"), or both speak of the same set-valued attribute ("My son Leo" / "My
    daughter Mia"): an addition, not a replacement."""
    had = {stem(t) for t in tokens(old)}
    if any(stem(m.group(1).casefold()) in had for m in _ONE_MORE.finditer(new)):
        return True
    if any(set_classes(m.group(1)) for m in _ONE_MORE_OF_A_SET.finditer(new)):
        return True
    return bool(set_classes(old) & set_classes(new))


def swapped(old: str, new: str, people: frozenset[str], max_words: int) -> bool:
    """Whether ``new`` states another value where ``old`` stated one: each names
    something the other does not ("Nordwind" / "Brightleaf"), or the newer names the
    old value beside a new one ("Leaving Nordwind for Brightleaf"). Texts of more than
    ``max_words`` content words hold several statements: never."""
    if content_words(old) > max_words or content_words(new) > max_words:
        return False
    if adds_one_more(old, new):
        return False
    before, after = values(old, people), values(new, people)
    if not before or not (after - before):
        return False
    if not (before & after) and _OCCASION.search(old) and _OCCASION.search(new):
        return False  # two occasions ("Lunch with Ana today" / "with Bo today"): events
    # The frame: the newer names the old value beside the new one, or the two share a
    # word once the values are masked ("I work at Nordwind" / "I work at Brightleaf
    # now"). Two statements that share neither ("Got back from Tallinn" / "Spent a few
    # days in Reykjavik") are about different things, however close their vectors.
    return bool(before & after) or bool(_frame(old, before) & _frame(new, after))


def changed(old: str, new: str, max_words: int) -> bool:
    """The cue path's test, for values without a name: one statement each, not one
    more member of a set, a content word in common (the frame), and each says a
    content word the other does not (a restatement says nothing new)."""
    if content_words(old) > max_words or content_words(new) > max_words:
        return False
    if adds_one_more(old, new) or EXTENDS.search(new) or CONTINUES.search(old):
        return False
    before, after = _frame(old, frozenset()), _frame(new, frozenset())
    # A frame in common, as the named path asks: a turn near the older that shares no
    # word with it ("I finally fixed the bike" after "Our rabbit chewed a cable") says
    # something else changed.
    return bool(before - after) and bool(after - before) and bool(before & after)


def _frame(text: str, named: frozenset[str]) -> set[str]:
    """The stems of a text's content words that are not its values."""
    masked = {stem(w) for n in named for w in n.split()}
    return {stem(t) for t in tokens(text)
            if t not in STOP_WORDS and not t.isdigit() and len(t) > 2} - masked


def _addressees(turns: Sequence[Turn]) -> dict[int, str | None]:
    """Each turn's addressee: the other participant of a two-person session, else the
    nearest earlier (then later) different speaker of its session."""
    by_session: dict[str, list[Turn]] = {}
    for turn in turns:
        by_session.setdefault(turn.session, []).append(turn)
    out: dict[int, str | None] = {}
    for members in by_session.values():
        members.sort(key=lambda t: (t.position, t.rowid))
        people = {t.speaker for t in members}
        for index, turn in enumerate(members):
            if len(people) == 2:
                out[turn.rowid] = next(p for p in people if p != turn.speaker)
                continue
            around = [*reversed(members[:index]), *members[index + 1 :]]
            out[turn.rowid] = next((t.speaker for t in around if t.speaker != turn.speaker),
                                   None)
    return out


def _questions(turns: Sequence[Turn]) -> dict[int, Turn]:
    """The question each turn answers: the turn just before it in its session, said by
    someone else, ending with a question mark."""
    ordered = sorted(turns, key=lambda t: (t.session, t.position, t.rowid))
    return {b.rowid: a for a, b in zip(ordered, ordered[1:], strict=False)
            if a.session == b.session and a.speaker != b.speaker and a.position + 1 == b.position
            and a.content.rstrip().endswith("?")}


class TurnLinks:
    """Run inside the facts write hook, after the general path."""

    def __init__(self, *, tuning: TurnTuning, vector_table: Callable[[Any], str | None],
                 link: Callable[[Connection, str, str, str, float], bool]) -> None:
        self.tuning = tuning
        self.vector_table = vector_table
        self.link = link
        self._vectors: dict[int, np.ndarray | None] = {}

    def __call__(self, tx: Connection, written: Sequence[tuple[Turn, str, Any]]) -> None:
        """``written``: (turn, namespace, its vector) of the batch's new turns."""
        fresh = [(t, ns, v) for t, ns, v in written if v is not None and t.session]
        if not fresh:
            return
        table = self.vector_table(tx)
        if table is None:
            return
        batch = [t for t, _, _ in fresh]
        for rowid, vector in ((t.rowid, v) for t, _, v in fresh):
            self._keep(rowid, np.asarray(vector, dtype=np.float32))
        groups: dict[tuple[str, str], list[tuple[Turn, Any]]] = {}
        for turn, ns, vector in fresh:
            groups.setdefault((ns, turn.session), []).append((turn, vector))
        for (ns, session), members in groups.items():
            asked = _questions([t for t, _ in members])
            if not any(self._may_swap(t, asked.get(t.rowid)) for t, _ in members):
                continue  # no turn of it could link: no query, no vectors read
            start = min(t.at for t, _ in members)
            pool = [Turn(int(r), str(i), str(s or ""), str(se), int(p or 0), str(o), str(c), b)
                    for r, i, s, se, p, o, c, b in earlier_turns(
                        tx, ns, session, start, self.tuning.pool)]
            if len(pool) < self.tuning.min_pool:
                continue
            matrix = self._matrix(tx, table, pool)
            if matrix is None:
                continue
            rows, vectors = matrix
            # Centred on the pool's mean: what every turn of the conversation shares (the
            # speaker and date words the stored vector holds, the chat's register) is
            # taken out, so what remains compares what the turns say. Once per session.
            centre = vectors.mean(axis=0)
            rest = vectors - centre
            unit = rest / (np.linalg.norm(rest, axis=1, keepdims=True) + 1e-12)
            talk = _addressees([*pool, *batch])
            people = frozenset(w for t in [*pool, *batch] for w in tokens(t.speaker))
            ask = self.tuning.asked
            about = [subjects(t.content, t.speaker, talk.get(t.rowid), asked=ask)
                     for t in rows]
            by_row = {t.rowid: np.asarray(v, dtype=np.float32) for t, v in members}
            for turn, _ in members:
                question = asked.get(turn.rowid)
                mine_v, said = by_row[turn.rowid], turn.content
                if question is not None:
                    # A reply is read with the question it answers ("Are you still at
                    # Marlow?" / "Nope, Tessaract these days"): the exchange is the
                    # statement.
                    mine_v = mine_v / np.linalg.norm(mine_v) + by_row[question.rowid] / (
                        np.linalg.norm(by_row[question.rowid]))
                    said = f"{question.content} {turn.content}"
                self._one(tx, ns, turn, said, mine_v, rows, unit, centre, about,
                          subjects(turn.content, turn.speaker, talk.get(turn.rowid),
                                   asked=ask), people)

    def _one(self, tx: Connection, ns: str, turn: Turn, said: str, vector: np.ndarray,
             rows: list[Turn], unit: np.ndarray, centre: np.ndarray,
             about: list[frozenset[str]], mine: frozenset[str], people: frozenset[str]) -> None:
        if EXTENDS.search(turn.content) or CONTINUES.search(turn.content):
            return  # one more item, or the old value said to hold: not a change
        named = bool(values(said, people))
        cued = self.tuning.cue_z is not None and says_change(turn.content)
        if not (named or cued) or content_words(said) > self.tuning.max_words:
            return  # names nothing, or several statements: no swap can follow (cheap first)
        mine_v = vector - centre
        length = float(np.linalg.norm(mine_v))
        if length <= 0:
            return
        cosines = unit @ (mine_v / length)
        spread = float(cosines.std())
        if spread <= 0:
            return
        candidates = [i for i, who in enumerate(about) if who & mine and rows[i].at < turn.at]
        if not candidates:
            return
        mean = float(cosines.mean())
        if named:
            # Only a turn that names a value can have its value swapped: the nearest of
            # those, not a question or small talk nearer still ("Where are you working
            # these days?" before the reply that names the company). It must still
            # stand out from the whole pool.
            stating = [i for i in candidates if values(rows[i].content, people)]
            if stating:
                best = max(stating, key=lambda i: float(cosines[i]))
                z = (float(cosines[best]) - mean) / spread
                old = rows[best]
                if (old.superseded_by is None and z >= self.tuning.z
                        and swapped(old.content, said, people, self.tuning.max_words)):
                    self.link(tx, ns, old.id, turn.id, z)
                    return
        if not cued or self.tuning.cue_z is None:
            return
        best = max(candidates, key=lambda i: float(cosines[i]))
        z = (float(cosines[best]) - mean) / spread
        old = rows[best]
        if (old.superseded_by is None and z >= self.tuning.cue_z
                and changed(old.content, said, self.tuning.max_words)):
            self.link(tx, ns, old.id, turn.id, z)

    def _may_swap(self, turn: Turn, question: Turn | None) -> bool:
        """The checks that read only the turn's text, before anything is queried."""
        said = turn.content if question is None else f"{question.content} {turn.content}"
        return (not EXTENDS.search(turn.content) and not CONTINUES.search(turn.content)
                and (bool(named_words(said)) or (self.tuning.cue_z is not None
                                                 and says_change(turn.content)))
                and content_words(said) <= self.tuning.max_words)

    def _keep(self, rowid: int, vector: np.ndarray | None) -> None:
        if len(self._vectors) >= _CACHE:
            self._vectors.clear()
        self._vectors[rowid] = vector

    def _matrix(self, tx: Connection, table: str, pool: list[Turn]
                ) -> tuple[list[Turn], np.ndarray] | None:
        unread = [t.rowid for t in pool if t.rowid not in self._vectors]
        if unread:
            blobs = embeddings_by_rowid(tx, table, unread)
            for rowid in unread:
                blob = blobs.get(rowid)
                self._keep(rowid, None if blob is None else
                           np.frombuffer(blob, dtype=np.float32))
        rows = [t for t in pool if self._vectors.get(t.rowid) is not None]
        if len(rows) < self.tuning.min_pool:
            return None
        return rows, np.stack([self._vectors[t.rowid] for t in rows])  # type: ignore[misc]
