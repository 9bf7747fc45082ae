"""Entity names: normalisation and the cheap rules that find names in text.

A name's key is its Unicode case-fold with whitespace collapsed and edge punctuation
removed, so "ACME  Corp." and "acme corp" are one entity. The display form is the first
spelling seen.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..core.text import STOP_WORDS
from .taxonomy import category_of

__all__ = ["Mention", "find_names", "normalise"]

_SPACES = re.compile(r"\s+")
_EDGE = re.compile(r"^[\W_]+|[\W_]+$")
_POSSESSIVE = re.compile(r"['’]s$")


def normalise(name: str) -> str:
    """The key of a name: NFKC, case-folded, single spaces, no edge punctuation."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _POSSESSIVE.sub("", _SPACES.sub(" ", text).strip())
    # Keep a trailing '+' or '#' (c++, c#) and inner dots (next.js, fly.io).
    if text.endswith(("++", "#")):
        return text
    return _EDGE.sub("", text)


@dataclass(frozen=True)
class Mention:
    """An entity mentioned in a memory: its key, how it was written, and its type."""

    key: str
    text: str
    type: str


# A run of capitalised words ("New York", "Acme Corp"), allowing "of"/"de" inside.
_CAPS = re.compile(
    r"(?<![\w'’])([A-Z][\w&'’.-]*[\w&]|[A-Z])((?:\s+(?:of|de|la|von|van|the)?\s*[A-Z][\w&'’.-]*[\w&])*)"
)
_OPENERS = frozenset(".!?\n\"“(:")
# Capitalised words that are not names (sentence openers, pronouns, calendar words).
_NOT_NAMES = frozenset(
    [
        "i", "i'm", "i've", "i'll", "i'd", "im", "ive", "hey", "hi", "hello", "yes", "yeah", "yep",
        "no", "nope", "oh", "ok", "okay", "wow", "thanks", "thank", "please", "sorry", "sure",
        "well", "so", "and", "but", "or", "then", "also", "just", "really", "great", "good", "nice",
        "cool", "awesome", "congrats", "congratulations", "haha", "lol", "omg", "btw", "anyway",
        "totally", "absolutely", "definitely", "monday", "tuesday", "wednesday", "thursday",
        "friday", "saturday", "sunday", "january", "february", "march", "april", "may", "june",
        "july", "august", "september", "october", "november", "december", "today", "yesterday",
        "tomorrow", "mr", "mrs", "ms", "dr", "the", "a", "an", "my", "our", "your", "his", "her",
        "their", "its", "this", "that", "these", "those", "what", "when", "where", "why", "how",
        "who", "which", "there", "here", "it", "he", "she", "we", "they", "you", "me", "us", "them"
    ]
)
# A lone capitalised word opening a sentence is a name when a verb or "and" follows it
# ("Alice joined", "Bob and I"), not when it is an opener ("Sounds good", "Wow").
_NAME_NEXT = re.compile(
    r"(?:['’]s\b|\s+(?:and|or|is|was|has|had|said|told|met|got|made|took|came|left|went|"
    r"will|would|can|could|did|does|[a-z]+ed|[a-z]+[^s]s)\b)"
)
_TECH_TOKEN = re.compile(r"[\w.+#-]+")
# Technology names that are also ordinary words: counted only when written capitalised.
_PLAIN_WORDS = frozenset(
    [
        "arch", "atom", "cursor", "spring", "express", "tea", "coffee", "espresso", "matcha",
        "rust", "swift", "windows", "react", "oracle", "tabs", "spaces", "nano", "helix", "zed",
        "julia", "ruby", "perl", "scala", "go", "python", "java", "vue"
    ]
)


def _is_name(words: str) -> bool:
    key = normalise(words)
    return bool(key) and key not in _NOT_NAMES and key not in STOP_WORDS


def find_names(text: str) -> list[Mention]:
    """Capitalised names (not a lone sentence-initial word) and known technology names."""
    found: dict[str, Mention] = {}
    for match in _CAPS.finditer(text):
        span = match.group(0)
        words = span.split()
        before = text[max(0, match.start() - 8) : match.start()].rstrip()
        at_start = not before or before[-1] in _OPENERS
        if at_start and len(words) == 1 and not _NAME_NEXT.match(text, match.end()):
            continue
        if at_start and normalise(words[0]) in _NOT_NAMES:
            words = words[1:]
        while words and normalise(words[-1]) in _NOT_NAMES:
            words = words[:-1]
        if not words:
            continue
        name = " ".join(words)
        if not _is_name(name):
            continue
        key = normalise(name)
        found.setdefault(key, Mention(key, name, category_of(key) and "tech" or "name"))
    for token in _TECH_TOKEN.findall(text):
        key = normalise(token)
        if key in found or category_of(key) is None or len(key) <= 2:
            continue
        if key in _PLAIN_WORDS and not token[:1].isupper():
            continue
        found[key] = Mention(key, token, "tech")
    return list(found.values())
