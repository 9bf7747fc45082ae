"""Segment-level relevance: a prompt matched against a memory's clauses, not only its whole.

A learning, gotcha or decision is several clauses (symptom, cause, fix, condition:
"pytest-asyncio 0.23 requires asyncio_mode = auto ...; otherwise async tests are silently
skipped"), and a prompt usually names one of them ("my async tests are not running").
One vector of the whole memory averages the clause the prompt is about with the others;
the clause's own vector does not. ``segments`` cuts a text into its clauses (sentences,
then the joints that start a new clause: "otherwise", "because", a colon, a dash); a text
of one clause has no segments (most conversation turns), so it costs nothing here.

``SegmentVectors`` encodes segments on demand, for the few candidates a prompt hook's gate
reads, and keeps them (bounded, per embedding space) in the process: the plugin's MCP
server and the daemon are long-lived, so a memory's clauses are encoded once and a prompt
pays only for candidates it has not met yet. Nothing is stored: the segments derive from
the text, and a changed text is a new key.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from .embed import Embedder

__all__ = ["MIN_WORDS", "SegmentVectors", "segments"]

# A clause shorter than this says too little to be matched on its own ("see above").
MIN_WORDS = 3
MAX_SEGMENTS = 8
# Sentence ends; line breaks; a comma before a word that starts a new clause; a dash
# between words; an opening parenthesis of a long aside.
_CUT = re.compile(
    r"(?<=[.!?;:])\s+|\n+"
    r"|,\s+(?=(?:otherwise|because|so|but|which|unless|when|since|or)\b)"
    r"|\s+[-\u2013\u2014]\s+|\s*\((?=[^)]{12,})"
)
_TRIM = " .,;:()"


def segments(text: str) -> list[str]:
    """The clauses of ``text`` worth matching alone; [] when it is one clause."""
    parts = [p.strip(_TRIM) for p in _CUT.split(text)]
    kept = [p for p in parts if len(p.split()) >= MIN_WORDS]
    return kept[:MAX_SEGMENTS] if len(kept) > 1 else []


class SegmentVectors:
    """Segment vectors encoded on demand and kept, at most ``capacity`` segments."""

    def __init__(self, embedder: Embedder, *, capacity: int = 20_000) -> None:
        self.embedder = embedder
        self.capacity = capacity
        self._cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.encoded = 0  # segments encoded so far (the bench reports the cache's worth)

    def clear(self) -> None:
        """Forget every kept vector (the bench measures a prompt that meets all anew)."""
        with self._lock:
            self._cache.clear()

    def best(self, query: Any, texts: Sequence[str]) -> list[float | None]:
        """Per text, the best cosine of ``query`` (a unit vector) to one of its segments;
        None for a text of one clause."""
        space = self.embedder.space
        key = space.key if space is not None else ""
        cut = [segments(t) for t in texts]
        wanted = {s for parts in cut for s in parts}
        with self._lock:
            known = {s: self._cache[(key, s)] for s in wanted if (key, s) in self._cache}
            for s in known:
                self._cache.move_to_end((key, s))
        missing = sorted(wanted - known.keys())
        if missing:
            fresh = self.embedder.encode(missing)
            with self._lock:
                for s, v in zip(missing, fresh, strict=True):
                    self._cache[(key, s)] = v
                    known[s] = v
                while len(self._cache) > self.capacity:
                    self._cache.popitem(last=False)
                self.encoded += len(missing)
        q = np.asarray(query, dtype=np.float32)
        return [max(float(known[s] @ q) for s in parts) if parts else None for parts in cut]
