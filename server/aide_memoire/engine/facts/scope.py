"""How far a word that keeps or adds reaches: its own clause, or the whole text.

"still", "as before" (a value holds on) and "also", "as well", a clause-closing "too"
(one more item) say that the newer memory does not replace the older. They speak for
the whole text only when nothing outside their clause states a change: in "Cormac still
cycles everywhere, but he left Guinness" the "still" keeps the cycling, not the job. So
a marker found here carries the words of the clauses it sits in, and whether a change
cue is said outside them; ``aspects.pair_features`` then asks whether those clauses are
about what the older memory said.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..core.kinds import CONTINUES, EXTENDS
from ..core.text import STOP_WORDS, tokens

__all__ = ["ADDS", "CONTINUES", "EXTENDS", "Marked", "main_clause", "marked", "reaches"]

ADDS = re.compile(r"\b(?:also|too|as well|additionally|another|in addition)\b", re.I)
# Where one clause ends and the next begins: punctuation, dashes, and the conjunctions
# that join two statements ("..., but he left", "though she moved", "and works at").
_CLAUSE = re.compile(
    r"[,;:.!?()\u2013\u2014]+|\s-\s|\b(?:but|though|although|whereas|while|and|yet|so)\b",
    re.I,
)
_NUMBER = re.compile(r"\d[\w.:/,-]*\w|\d")
# An inserted relative clause (", who has a bad knee,", ", which is cheaper."): an aside.
_INSERT = re.compile(
    r",\s*(?:who|which|whose|whom|where)\b[^;.!?]*?(?:,\s*|(?=[.;!?]|$))", re.I)
# What opens a sentence ahead of its main clause: a subordinate clause, a prepositional
# phrase or a participle ("When the basement flooded ...,", "At the offsite, between the
# workshops ...,", "Following the advisory ...,").
_OPENER = re.compile(
    r"^\s*(?:since|after|when|because|although|though|while|once|as|before|until|if|"
    r"now that|ever since|following|during|between|with|without|despite|at|in|on|for|"
    r"given|thanks to|[A-Za-z]+ing)\b",
    re.I,
)
_SENTENCE_END = re.compile(r"[.!?;](?:\s|$)")


@dataclass(frozen=True)
class Marked:
    """The clauses a marker sits in: their words, and whether it speaks for all the text."""

    words: frozenset[str]  # stems and numbers of the marked clauses
    whole: bool  # no change cue outside the marked clauses


def marked(
    text: str, marker: re.Pattern[str], *, stem: Callable[[str], str],
    has_cue: Callable[[str], bool],
) -> Marked | None:
    """None when ``marker`` is not said; else where it reaches."""
    # What an aside says ("Eberhard, who moved flat last month, also teaches bass";
    # "Mariusz, who still referees, now coaches ...") is about the aside: its marker
    # does not speak for the text, and its change word does not narrow one outside it.
    text = _INSERT.sub(" , ", text) if "," in text else text
    if not marker.search(text):
        return None
    inside: list[str] = []
    outside: list[str] = []
    for clause in _clauses(text):
        (inside if marker.search(clause) else outside).append(clause)
    if not inside:  # a marker split across a boundary ("as / well"): the whole text
        return Marked(frozenset(), True)
    words: set[str] = set()
    for clause in inside:
        words.update(m.group(0).casefold().rstrip(".,") for m in _NUMBER.finditer(clause))
        words.update(stem(w) for w in tokens(clause)
                     if w not in STOP_WORDS and len(w) > 1 and not w[0].isdigit())
    return Marked(frozenset(words), not any(has_cue(c) for c in outside))


def reaches(found: Marked | None, older: frozenset[str]) -> bool:
    """Whether the marker speaks about ``older`` (the older memory's words and values):
    it covers the whole text, or its clauses restate at least half of those words. One
    shared word is not enough: it is usually the subject, which the other clauses,
    stating the change, are about too."""
    if found is None:
        return False
    return found.whole or 2 * len(found.words & older) >= len(older) > 0


def main_clause(text: str, content: Callable[[str], int]) -> str:
    """The first sentence's main clause, with inserted relative clauses and what opens
    the sentence ahead of it left out; ``text`` itself when there is nothing to leave out.

    An opening may hold a list ("After two outages, a post-mortem and a budget fight,
    the invoices are ..."): it ends at the last comma that still leaves a
    clause of at least three content words (``content`` counts them) after it, so an
    apposition at the end ("... sees Dr Okafor, his new GP") stays in the main clause.
    """
    out = _INSERT.sub(" ", text) if "," in text else text
    if not _OPENER.match(out):
        return out
    end = _SENTENCE_END.search(out)
    first = out[: end.start()] if end else out
    commas = [i for i, c in enumerate(first) if c == ","]
    for at in reversed(commas):
        if content(first[at + 1:]) >= 3:
            return out[at + 1:].strip()
    return out[commas[0] + 1:].strip() if commas else out


def _clauses(text: str) -> list[str]:
    # The marker regexes hold two-word phrases ("as well"): a boundary inside one is
    # not possible, since none of them contains a boundary word or punctuation.
    return [part for part in _CLAUSE.split(text) if part and part.strip()]
