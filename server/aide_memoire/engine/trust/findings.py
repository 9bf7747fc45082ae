"""What a screening rule reports: a kind of thing found, where, and how sure the rule is.

A finding never carries the matched text: only its kind and character span, so that
findings can be stored, logged and shown without leaking what they point at.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Literal

__all__ = ["Category", "Confidence", "Finding", "shannon_entropy"]

Category = Literal["secret", "pii", "injection"]
Confidence = Literal["high", "medium"]


@dataclass(frozen=True)
class Finding:
    """One rule's match: ``text[start:end]`` in ``field`` is a ``label``."""

    category: Category
    rule: str
    label: str
    start: int
    end: int
    confidence: Confidence = "high"
    field: str = "content"

    def as_evidence(self) -> dict[str, object]:
        return {
            "category": self.category,
            "rule": self.rule,
            "label": self.label,
            "start": self.start,
            "end": self.end,
            "confidence": self.confidence,
            "field": self.field,
        }


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text`` (0 for empty text)."""
    if not text:
        return 0.0
    counts = Counter(text)
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())
