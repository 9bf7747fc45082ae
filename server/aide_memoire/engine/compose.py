"""What each memory is indexed as: the text the dense model encodes.

Kept in one place so that the indexing recipe (measured on LOCOMO, docs/benchmarks.md)
can change without touching the write path.
"""

from __future__ import annotations

from .store import NewRow
from .text import date_words

__all__ = ["dense_text"]


def dense_text(row: NewRow) -> str:
    """One encoding per memory: who said it and when, the text, and a little context."""
    parts: list[str] = []
    if row.speaker:
        parts.append(f"{row.speaker}:")
    parts.append(row.content)
    if row.kind == "turn" and row.observed_at is not None:
        parts.append(f"({date_words(row.observed_at)})")
    if row.tags:
        parts.append(" ".join(row.tags))
    return " ".join(parts)
