"""What each memory is indexed as: its keyword document and the text the dense model encodes.

Kept in one place so that the indexing recipe (measured on LOCOMO, docs/benchmarks.md)
can change without touching the write path. A conversation turn is indexed with its
neighbours: the turn before (``context``), the turn after (``after``) and the two
beyond each (``window``), so a reply such as "What did it look like?" is found by what
it replied to, and an answer by the question that prompted it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from .text import date_words

__all__ = ["FtsDoc", "IndexedTurn", "dense_text", "fts_document", "turn_line"]


@dataclass(frozen=True)
class IndexedTurn:
    """What the index needs of a memory (a new row or a stored one)."""

    kind: str
    content: str
    speaker: str | None
    tags: list[str]
    observed_at: datetime | None
    context: str | None


FtsDoc = tuple[str, str, str, str, str, str, str]


def turn_line(speaker: str | None, content: str) -> str:
    return f"{speaker}: {content}" if speaker else content


def fts_document(item: IndexedTurn, neighbours: Mapping[int, str] | None = None) -> FtsDoc:
    """Columns in FTS_COLUMNS order: content, speaker, context, after, window, tags, dates.

    ``neighbours`` maps an offset in the session (-3..3, not 0) to that turn's line.
    """
    near = neighbours or {}
    before = near.get(-1) or item.context or ""
    window = " ".join(near[o] for o in (-3, -2, 2, 3) if near.get(o))
    return (
        item.content,
        item.speaker or "",
        before,
        near.get(1, ""),
        window,
        " ".join(item.tags),
        date_words(item.observed_at, weekday=False),
    )


def dense_text(item: IndexedTurn) -> str:
    """One encoding per memory: for a turn, when, who and what was said; else text and tags."""
    if item.kind == "turn" and item.speaker:
        when = f"On {date_words(item.observed_at, weekday=False)}, " if item.observed_at else ""
        return f"{when}{item.speaker} said: {item.content}"
    if item.tags:
        return f"{item.content} ({', '.join(item.tags)})"
    return item.content
