"""What a memory is about and what it states, for the general supersession path.

A memory's *signature* splits its words into the **values** it states (names, numbers,
versions, times, handles: what changes when something is updated) and the **aspect**
words left when those are masked (what the statement is about: "host", "search", "api").
Two memories about the same subject and aspect that state different values are
candidates for an update; a **change cue** in the newer one ("moved", "now", "no longer",
"from X to Y") makes it likelier. Nothing here knows a predicate or a phrase pattern:
the cue words are the only list, and they raise confidence without being required.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text import STOP_WORDS, tokens
from .entities import Mention

__all__ = ["Signature", "pair_features", "signature", "stem"]

# Words that state a change. Strong ones say so outright; weak ones ("now", "these days")
# mostly mark the present, which a stale statement was not.
_STRONG = frozenset(
    """moved move moving switched switch switching migrated migrate migrating upgraded
    upgrade bumped replaced replace replacing swapped swap instead stepped quit left
    joined relocated transferred renamed rewritten rewrote changed change dropped
    cancelled canceled stopped retired became become promoted handed passed
    anymore longer gave raised lowered extended pushed shifted converted finally
    sold ditched abandoned""".split()
)
_WEAK = frozenset(
    """now new newly started starts start since days currently today nowadays latest
    rather after got hired accepted""".split()
)
CUES = _STRONG | _WEAK
# Phrases whose words alone would be stop words or too common.
_PHRASES = (
    re.compile(r"\bno longer\b|\bnot any ?more\b|\bthese days\b|\bfrom now on\b|"
               r"\bover to\b|\btook over\b|\bstepped (?:down|back)\b|\binstead of\b|"
               r"\brather than\b|\bfrom \S+(?: \S+)? to\b|\bnot\b|\bn't\b", re.I),
)
_VALUE_TOKEN = re.compile(r"\d|@")
_SUFFIXES = ("ing", "ies", "ed", "es", "s")


def stem(word: str) -> str:
    """A crude suffix strip, enough to match "hosts"/"hosted"/"hosting" to "host"."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix == "ies" else base
    return word


@dataclass(frozen=True)
class Signature:
    """The parts of one memory the general path compares."""

    names: frozenset[str]  # entity keys (the subject or the values)
    name_words: frozenset[str]  # stems of the words of those names
    values: frozenset[str]  # stems that state a value: name words, numbers, handles
    aspect: frozenset[str]  # content stems with values and cue words masked
    cue: float  # 1.0 a strong change cue, 0.5 a weak one, 0.0 none
    subject: str | None  # "we", or the speaker/"user" for first-person text
    head: frozenset[str]  # the first content words: where a sentence names its topic

    def terms(self) -> list[str]:
        """Index terms: what another memory about the same thing would share."""
        return sorted(self.aspect | self.name_words)[:16]


def signature(text: str, mentions: list[Mention], *, speaker: str | None) -> Signature:
    words = tokens(text)
    names = frozenset(m.key for m in mentions)
    name_words = frozenset(stem(w) for key in names for w in tokens(key))
    stems = [stem(w) for w in words if w not in STOP_WORDS or w in CUES]
    values = {s for s in stems if s in name_words or _VALUE_TOKEN.search(s)}
    aspect = frozenset(
        s for s in stems
        if s not in values and s not in CUES and len(s) > 2 and s not in STOP_WORDS
    )
    cue = 0.0
    if any(p.search(text) for p in _PHRASES) or any(w in _STRONG for w in words):
        cue = 1.0
    elif any(w in _WEAK for w in words):
        cue = 0.5
    lowered = set(words)
    subject: str | None = None
    if lowered & {"i", "my", "me", "i'm", "im"}:
        subject = (speaker or "user").casefold()
    elif lowered & {"we", "our", "us"}:
        subject = "we"
    head = frozenset(_head(stems))
    return Signature(names, name_words, frozenset(values), aspect, cue, subject, head)


def _head(stems: list[str]) -> list[str]:
    out: list[str] = []
    for s in stems:
        if s in CUES or s in STOP_WORDS or len(s) < 3:
            continue
        out.append(s)
        if len(out) == 2:
            break
    return out


@dataclass(frozen=True)
class Features:
    """How an older and a newer memory relate (each 0..1)."""

    subject: float  # a shared name, or the same first-person/team subject
    aspect: float  # overlap of the masked content words
    differs: float  # each states a value the other does not
    names_old: float  # the newer names a value of the older (“from X”, “left X”)
    cue: float
    dense: float | None  # cosine of the two rows' vectors, when both have one


def pair_features(old: Signature, new: Signature, dense: float | None) -> Features:
    shared = old.names & new.names
    if shared:
        subject = 1.0
    elif old.head & new.head:
        subject = 0.75
    elif old.subject and old.subject == new.subject:
        subject = 0.5
    else:
        subject = 0.0
    small = min(len(old.aspect), len(new.aspect))
    aspect = len(old.aspect & new.aspect) / small if small else 0.0
    old_only = old.values - new.values
    new_only = new.values - old.values
    # A lowercase value ("dark mode" -> "light mode") shows as aspect words on one side.
    lone_old = old.aspect - new.aspect
    lone_new = new.aspect - old.aspect
    if new_only and old_only:
        differs = 1.0
    elif new_only:
        differs = 0.75  # "from X to Y" names the old value too
    elif old_only or (lone_old and lone_new):
        differs = 0.5
    else:
        differs = 0.0
    names_old = 1.0 if new.cue and new_only and old.values & new.values else 0.0
    return Features(subject, aspect, differs, names_old, new.cue, dense)
