"""Kinds of statement read from the words alone, shared by the write path's links
(engine/facts) and recall's stages after fusion (engine/recall), which must agree on
what only adds: a word stem, the grammatical markers of one more item or of a value that
holds on, and the attributes a person holds many of at once.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .text import tokens

__all__ = ["CONTINUES", "EXTENDS", "SET_CLASSES", "SET_MARKERS", "only_adds", "set_classes", "stem"]

_SUFFIXES = ("ing", "ies", "ers", "ed", "es", "s")


@lru_cache(maxsize=1 << 16)  # a conversation repeats its words: strip each once
def stem(word: str) -> str:
    """A crude suffix strip, enough to match "hosts"/"hosted"/"hosting" to "host"."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix == "ies" else base
    return word


# One more item ("also", "as well", "another"), without "too" inside a clause, as often
# "too slow" (a reason to change) as additive; "too" closing a clause ("a second cluster
# in Ohio too.") adds.
EXTENDS = re.compile(
    r"\b(?:also|as well|additionally|another|in addition)\b|\btoo\b(?=\s*(?:[.,;:!)]|$))",
    re.I,
)
# Words that say a value holds on ("still", "as before", "stayed"): the newer restates
# the older, whatever else differs in the wording.
CONTINUES = re.compile(
    r"\b(?:still|remains?|remained|stayed|stays|as before|as usual|as always|unchanged|"
    r"continues to|continued to|same as (?:before|ever))\b",
    re.I,
)


# Attributes a person has many of at once (issue #31: "never for series that only add"):
# the kin and the people around them, pets, pastimes, languages, and the places they
# go. Two turns that each speak of one class ("My son Leo ..." / "My daughter Mia ...";
# "I speak Basque" / "I speak Dutch") and name different values are two members of a
# set, not a change of one value. Classes of words, not lists of the sets' values.
SET_CLASSES: dict[str, frozenset[str]] = {cls: frozenset(stem(w) for w in words.split())
                                          for cls, words in {
    "kin": "child children kid kids son sons daughter daughters baby babies boy boys girl "
           "girls twin twins brother brothers sister sisters sibling siblings cousin cousins "
           "nephew nephews niece nieces grandson grandsons granddaughter granddaughters "
           "grandchild grandchildren grandkid grandkids stepson stepdaughter godson "
           "goddaughter eldest youngest oldest",
    "people": "friend friends buddy buddies pal pals mate mates bestie neighbour neighbours "
              "neighbor neighbors classmate classmates teammate teammates flatmate "
              "flatmates roommate roommates",
    "pets": "pet pets dog dogs puppy puppies cat cats kitten kittens rabbit rabbits bunny "
            "hamster hamsters parrot parrots budgie bird birds fish goldfish horse horses "
            "pony ponies tortoise turtle lizard snake ferret chicken chickens hens shelter "
            "adopted adopt",
    "pastimes": "hobby hobbies pastime pastimes play plays playing played instrument "
                "instruments collect collects collecting collection club clubs lesson "
                "lessons class classes practise practises practising practice practicing",
    "languages": "speak speaks speaking spoke language languages fluent",
    "places": "visit visits visited visiting trip trips holiday holidays vacation vacations "
              "travel travels travelled traveled travelling traveling tour toured "
              "sightseeing",
}.items()}


# Phrases that speak of a class when no single word does: places been to ("went to",
# "a weekend in", "back from"; past or of one stay, so "I go to Elmwood" and "I moved to
# Porto" are not visits), and companions named by either speaker ("Juniper is running
# with you lot", "joined us"): a person beside the one spoken of is one more of a set.
SET_MARKERS: dict[str, re.Pattern[str]] = {
    "places": re.compile(
        r"\b(?:went|been|gone|flew|flown|travelled|traveled) (?:to|into)\b|\bback from\b|"
        r"\b(?:weekend|weekends|week|fortnight|days|nights|holiday|break|stopover|trip|"
        r"getaway) (?:away )?(?:in|to|at)\b", re.I),
    "people": re.compile(
        r"(?<!new )(?<!up )(?<!on )(?<!wrong )"
        r"\bwith (?:you lot|you guys|you all|y['’]all|the rest of you|you|us|me)\b|"
        r"\bjoin(?:s|ed|ing)? (?:you|us|me)\b|\byour (?:crew|gang|group|lot)\b", re.I),
}


def set_classes(text: str) -> set[str]:
    """The set-valued classes a text speaks of: by a word of the class or a phrase."""
    words = {stem(t) for t in tokens(text)}
    return ({cls for cls, stems in SET_CLASSES.items() if words & stems}
            | {cls for cls, marker in SET_MARKERS.items() if marker.search(text)})


def only_adds(text: str) -> bool:
    """Whether ``text`` says one more item, that a value holds on, or speaks of an
    attribute held many at once: nothing in it replaces an earlier value."""
    return bool(EXTENDS.search(text) or CONTINUES.search(text) or set_classes(text))
