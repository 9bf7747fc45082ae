"""Text helpers shared by indexing and querying: tokens, stop words, FTS5 queries, date words."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime

__all__ = ["STOP_WORDS", "date_words", "fts_query", "query_terms", "tokens"]

_TOKEN_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)

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
