"""Time in the question: "in May", "in 2022", "last week", "three months ago" as a window.

A window is resolved against a reference time: the newest of the leading candidates (a
conversation's present is its last session; in a live store the newest rows are from
around now), so a benchmark replaying an old chat and a user asking today read "last
month" the same way, and no clock is read. Only explicit expressions are read: a month
name (with or without its year), a year, "last/this week|month|year", "yesterday", "N
days/weeks/months/years ago". None when the question names no time.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = ["TimeWindow", "question_window"]

TimeWindow = tuple[float, float]  # seconds since the epoch, start inclusive, end exclusive

_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december"]
# "May" only capitalised: "may" is a verb far more often than a month.
_MONTH = re.compile(
    r"\b(?:(?i:in|during|of|since|by|early|late|mid)\s+)?((?i:january|february|march|april|"
    r"june|july|august|september|october|november|december)|May)(?:\s*,?\s+((?:19|20)\d\d))?\b"
)
_YEAR = re.compile(r"\b(?:in|during|of)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_LAST = re.compile(r"\b(last|this|past)\s+(week|weekend|month|year)\b", re.IGNORECASE)
_YESTERDAY = re.compile(r"\byesterday\b", re.IGNORECASE)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a few": 3, "a couple of": 2}
_AGO = re.compile(r"\b(\d+|a few|a couple of|an?|one|two|three|four|five|six|seven|eight|"
                  r"nine|ten)\s+(day|week|month|year)s?\s+ago\b", re.IGNORECASE)
_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def _month_window(year: int, month: int) -> TimeWindow:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start.timestamp(), end.timestamp()


def question_window(question: str, reference: float) -> TimeWindow | None:
    """The span of time ``question`` names, read against ``reference`` (epoch seconds)."""
    ref = datetime.fromtimestamp(reference, UTC)
    if found := _MONTH.search(question):
        month = _MONTHS.index(found.group(1).lower()) + 1
        if found.group(2):
            return _month_window(int(found.group(2)), month)
        # No year: the latest such month not after the reference.
        year = ref.year if month <= ref.month else ref.year - 1
        return _month_window(year, month)
    if found := _YEAR.search(question):
        year = int(found.group(1))
        return (datetime(year, 1, 1, tzinfo=UTC).timestamp(),
                datetime(year + 1, 1, 1, tzinfo=UTC).timestamp())
    if found := _AGO.search(question):
        text = found.group(1).lower()
        count = int(text) if text.isdigit() else _NUMBERS[text]
        days = count * _DAYS[found.group(2).lower()]
        # Half the unit either side: "three months ago" is roughly, not exactly, 90 days.
        half = _DAYS[found.group(2).lower()] / 2
        centre = ref - timedelta(days=days)
        return ((centre - timedelta(days=half)).timestamp(),
                (centre + timedelta(days=half + 1)).timestamp())
    if found := _LAST.search(question):
        unit = found.group(2).lower()
        span = {"week": 7, "weekend": 7, "month": 31, "year": 366}[unit]
        back = span if found.group(1).lower() == "this" else 2 * span
        return (ref - timedelta(days=back)).timestamp(), (ref + timedelta(days=1)).timestamp()
    if _YESTERDAY.search(question):
        return (ref - timedelta(days=2)).timestamp(), (ref + timedelta(days=1)).timestamp()
    return None
