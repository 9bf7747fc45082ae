"""Text helpers shared by indexing and querying: tokens, stop words, FTS5 queries, date words."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

__all__ = [
    "STOP_WORDS",
    "QueryShape",
    "date_words",
    "feedback_terms",
    "fts_query",
    "named_words",
    "query_shape",
    "query_terms",
    "states_change",
    "states_time",
    "tokens",
]



class _Lazy:
    """A pattern compiled on its first use: a process that lives for one prompt (the
    prompt hook) compiles only the few it needs, not every pattern of this module."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern, self._flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    def _get(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self._get().search(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self._get().finditer(text)

    def findall(self, text: str) -> list[str]:
        return self._get().findall(text)


_TOKEN_RE = _Lazy(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)

# Function words that carry no evidence. Kept short on purpose: content words such as
# "like", "home" or "first" stay searchable.
STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "don",
        "ll",
        "ve",
        "re",
        "d",
        "m",
        "o",
        "y",
        "also",
        "did",
        "does",
        "get",
        "got",
        "ever",
        "likely",
        "might",
        "may",
        "much",
        "many",
        "one",
        "ones",
        "thing",
        "things",
        "kind",
        "kinds",
        "go",
        "went",
        "let",
    ]
)

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def tokens(text: str) -> list[str]:
    """Word tokens, case-folded, apostrophes split off ("Melanie's" -> "melanie", "s")."""
    out: list[str] = []
    for match in _TOKEN_RE.finditer(_fold(text)):
        out.extend(part for part in re.split(r"['’]", match.group(0)) if part)
    return out


def query_terms(query: str) -> list[str]:
    """Distinct content words of a query; all words if every one is a stop word."""
    words = tokens(query)
    content = [w for w in words if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())]
    chosen = content or words
    seen: dict[str, None] = {}
    for word in chosen:
        seen.setdefault(word, None)
    return list(seen)


def fts_query(terms: list[str], all_of: list[str] | None = None) -> str | None:
    """An FTS5 MATCH expression: each term quoted (so no syntax can leak in), OR-ed;
    ``all_of`` (two or more terms) joins as one more alternative, "(a AND b ...)"."""
    quoted = [_quote(term) for term in terms if term]
    group = [_quote(term) for term in all_of or [] if term]
    if len(group) >= 2:
        quoted.append("(" + " AND ".join(group) + ")")
    if not quoted:
        return None
    return " OR ".join(quoted)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def date_words(value: datetime | None, *, weekday: bool = True) -> str:
    """Words a question may use for a date: '8 May 2023 Monday'."""
    if value is None:
        return ""
    words = f"{value.day} {_MONTHS[value.month - 1]} {value.year}"
    return f"{words} {_DAYS[value.weekday()]}" if weekday else words


# What a question about time looks like: asked with "when", "how long (ago)", "since
# when", "what year / month / date / day", "how many days / weeks ... ago".
_TEMPORAL_Q = _Lazy(
    r"\b(?:when|since\s+when|how\s+long|how\s+many\s+(?:days|weeks|months|years)|"
    r"what\s+(?:year|month|date|day|time|week|weekend)|which\s+(?:year|month|day|week))\b",
    re.IGNORECASE,
)
# What a statement of time looks like: a relative reference ("yesterday", "last week",
# "two years ago"), a month or weekday name, or a year.
# ("May" only capitalised: "may" is a verb.)
_MONTH_OR_DAY = "|".join(m.lower() for m in _MONTHS + _DAYS if m != "May") + "|(?-i:May)"
_TIME_STATED = _Lazy(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|recently|lately|earlier|"
    r"(?:last|next|this|past|coming)\s+(?:week|weekend|month|year|night|summer|winter|"
    r"spring|fall|autumn|few\s+\w+|couple|" + _MONTH_OR_DAY + r")|"
    + _MONTH_OR_DAY + r"|(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
# Identifier-shaped words: snake_case, dotted names, paths, Foo::bar, kebab codes with a
# digit, camelCase, ALL-CAPS with a digit, hex of 7+ characters. Prose forms stay out:
# "U.S.", "J.K.", "and/or", "artists/bands".
_IDENTIFIER = _Lazy(
    r"(?<![\w.])(?:"
    r"\w+_\w+"  # snake_case, ALL_CAPS_NAME
    r"|\w{2,}(?:\.\w{2,})+"  # os.path.join, flags.yaml
    r"|/?\w+(?:/[\w.-]+){2,}|/\w[\w.-]*"  # a/b/c, /etc/hosts
    r"|\w+(?:::\w+)+"  # Foo::bar
    r"|v?\d+(?:\.\d+){2,}|v\d+(?:\.\d+)+"  # 2.3.1, v1.4
    r"|(?=[\w-]*\d)[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+"  # XJ-4471, v2-beta-3
    r"|[a-z]+[A-Z]\w*"  # camelCase
    r"|(?=\w*\d)[A-Z][A-Z0-9]{2,}"  # E1234, HTTP2
    r"|[0-9a-f]{7,40}"  # commit-like hex
    r")(?![\w])"
)


@dataclass(frozen=True)
class QueryShape:
    """What kind of question a query is, as far as fusion cares."""

    temporal: bool = False
    identifier: bool = False
    # A present-tense question about one attribute ("where does Sam work?"): what holds
    # now is asked, so the later of two statements answers it.
    present: bool = False
    # A question answered by a name ("which company", "where", "who"): a turn that names
    # something can answer it, small talk cannot.
    asks_name: bool = False


_ASKS_NAME = _Lazy(r"^\W*(?:which|where|who|whom|whose)\b", re.IGNORECASE)
# A name in running text: a capitalised word that does not open a sentence (nor "I"), or
# a number.
_NAMED = _Lazy(r"(?<![.!?:;\"]\s)(?<!^)(?<![.!?]\s\s)\b(?!I\b|I'[a-z]+\b)[A-Z][\w'-]*"
                    r"|\b\d")


_ADDRESSES = _Lazy(r"\b(?:you|your|yours|you're|you've|you'd|you'll)\b", re.IGNORECASE)


def addresses_someone(text: str) -> bool:
    """Whether a text speaks to someone in the second person."""
    return bool(_ADDRESSES.search(text))


def names_something(text: str) -> bool:
    """Whether a text names something: a capitalised word inside a sentence, a number."""
    return bool(_NAMED.search(text.strip()))


def named_words(text: str) -> frozenset[str]:
    """The names a text holds (capitalised words inside a sentence), case-folded."""
    return frozenset(_fold(m.group(0)) for m in _NAMED.finditer(text.strip())
                     if not m.group(0)[0].isdigit())


# A statement that something changed or holds now rather than before: words of change of
# state ("switched", "moved", "no longer"), of the present against the past ("these days",
# "anymore"), leaving one thing for another ("instead of", "gave up"). A class of English
# phrasing, not of any one attribute: jobs, homes, tools, roles, habits, partners alike.
_CHANGE = _Lazy(
    r"\b(?:now|nowadays|these\s+days|any\s?more|no\s+longer|not\s+anymore|instead|"
    r"switch(?:ed|ing)|swap(?:ped|ping)|mov(?:ed|ing)|migrat(?:ed|ing)|chang(?:ed|ing)|"
    r"left|leaving|quit|gave\s+up|giving\s+up|dropped|replaced|promot(?:ed|ion)|"
    r"again)\b",
    re.IGNORECASE,
)


def states_change(text: str) -> bool:
    """Whether a text says that something changed, or holds now as against before."""
    return bool(_CHANGE.search(text))


# A wh-question in the present tense...
_PRESENT_Q = _Lazy(
    r"^\W*(?:what|which|where|who|whom|whose|how)\b[^.!]*?\b(?:is|does|do|'s|are)\b",
    re.IGNORECASE,
)
# ...that asks neither about the past nor for a series ("what pets", "who are her
# friends", "what are his hobbies": every item of the series stays true).
_NOT_PRESENT = _Lazy(
    r"\b(?:did|was|were|had|has|have\s+\w+ed|used\s+to|before|first|originally|"
    r"previously|ever|ago|last|earlier|all|every|list|other|else)\b"
    r"|^\W*(?:what|which)\s+(?:kinds?\s+of\s+|types?\s+of\s+)?(?!is\b|does\b|was\b|has\b)"
    r"\w+s\b|^\W*(?:what|who|which)\s+are\b",
    re.IGNORECASE,
)


def query_shape(query: str) -> QueryShape:
    """A question about time, whether the query holds an identifier-shaped word, and
    whether it asks what holds now about one attribute."""
    # A pure-letter match is only an identifier in camelCase (not a word like "accede").
    found = [m for m in _IDENTIFIER.findall(query) if not m.isalpha() or m != m.lower()]
    temporal = bool(_TEMPORAL_Q.search(query))
    present = (not temporal and bool(_PRESENT_Q.search(query))
               and not _NOT_PRESENT.search(query))
    return QueryShape(temporal=temporal, identifier=bool(found), present=present,
                      asks_name=not temporal and bool(_ASKS_NAME.search(query)))


def states_time(text: str) -> bool:
    """Whether a text states a time: a relative reference, a month or weekday, a year."""
    return bool(_TIME_STATED.search(text))


def feedback_terms(texts: list[str], known: set[str], count: int) -> list[str]:
    """Content words found in at least two of ``texts`` and not in ``known``, the most
    widely shared first (ties: longer, then alphabetical): what the best rows agree on."""
    seen: dict[str, int] = {}
    for text in texts:
        for word in set(query_terms(text)):
            if word not in known and not word.isdigit() and len(word) > 2:
                seen[word] = seen.get(word, 0) + 1
    shared = [w for w, n in seen.items() if n >= 2]
    shared.sort(key=lambda w: (-seen[w], -len(w), w))
    return shared[:count]
