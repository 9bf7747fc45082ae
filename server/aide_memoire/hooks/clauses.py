"""A memory's clauses, matched alone: a prompt names one of them, rarely the whole.

A learning, gotcha or decision is several clauses (the cause, the fix, the symptom, the
condition: "pytest-asyncio 0.23 requires asyncio_mode = auto in pytest.ini (or a marker on
each test); otherwise async test functions are collected but silently skipped"), and a
prompt worded as a symptom names one ("my async tests are not running"). One vector of
the whole memory averages that clause with the others; the clause's own vector does not.

``clauses`` cuts a text at sentence ends, colons and semicolons, line breaks, a comma
before a word that opens a clause ("otherwise", "because", ...), a dash between words
and a long parenthesis; pieces under three words are dropped, at most eight kept, and a
text of one clause has none (most conversation turns: they cost nothing here).

``ClauseVectors`` encodes clauses on demand, for the few best candidates of a prompt, in
one batch with the prompt, and keeps them (bounded, per embedding space) in the process:
the plugin's MCP server and the daemon live for the session, so a memory's clauses are
encoded once. Nothing is stored; a changed text is simply a new key. The cold hook
process has no model and never comes here.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ..engine.recall.embed import Embedder

__all__ = ["MAX_CLAUSES", "MIN_WORDS", "ClauseVectors", "PerEmbedder", "clause_vectors", "clauses"]

# A clause shorter than this says too little to be matched on its own ("see above").
MIN_WORDS = 3
MAX_CLAUSES = 8
_CUT = re.compile(
    r"(?<=[.!?;:])\s+|\n+"
    r"|,\s+(?=(?:otherwise|because|so|but|which|unless|when|since|or|then|until)\b)"
    r"|\s+[-\u2013\u2014]\s+|\s*\((?=[^)]{12,})"
)
_TRIM = " .,;:()"


def clauses(text: str) -> list[str]:
    """The clauses of ``text`` worth matching alone; [] when it is one clause."""
    parts = [p.strip(_TRIM) for p in _CUT.split(text)]
    kept = [p for p in parts if len(p.split()) >= MIN_WORDS]
    return kept[:MAX_CLAUSES] if len(kept) > 1 else []


class ClauseVectors:
    """Clause vectors encoded on demand and kept, at most ``capacity`` of them."""

    def __init__(self, embedder: Embedder, *, capacity: int = 20_000) -> None:
        self.embedder = embedder
        self.capacity = capacity
        self._cache: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()
        self.encoded = 0  # clauses encoded so far (the bench reports what keeping saves)

    def clear(self) -> None:
        """Forget every kept vector (the bench times a prompt that meets all anew)."""
        with self._lock:
            self._cache.clear()

    def best(self, prompt: str, texts: Sequence[str]) -> list[float | None]:
        """Per text, the prompt's best cosine to one of its clauses; None for a text of
        one clause. The prompt is encoded in the batch of the clauses not met before."""
        space = self.embedder.space
        key = space.key if space is not None else ""
        cut = [clauses(t) for t in texts]
        wanted = {c for parts in cut for c in parts}
        if not wanted:
            return [None] * len(texts)
        with self._lock:
            known = {c: self._cache[(key, c)] for c in wanted if (key, c) in self._cache}
            for c in known:
                self._cache.move_to_end((key, c))
        missing = sorted(wanted - known.keys())
        vectors = self.embedder.encode([prompt, *missing])
        query = vectors[0]
        with self._lock:
            for c, v in zip(missing, vectors[1:], strict=True):
                self._cache[(key, c)] = v
                known[c] = v
            while len(self._cache) > self.capacity:
                self._cache.popitem(last=False)
            self.encoded += len(missing)
        return [max(float(known[c] @ query) for c in parts) if parts else None
                for parts in cut]


T = TypeVar("T")


class PerEmbedder(Generic[T]):
    """One ``factory(embedder)`` per embedder, kept as long as the embedder lives (the
    vectors a warm process keeps: clauses here, token vectors in late.py)."""

    def __init__(self, factory: Callable[[Embedder], T]) -> None:
        self._factory = factory
        self._kept: weakref.WeakKeyDictionary[Any, T] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def __call__(self, embedder: Embedder) -> T:
        with self._lock:
            kept = self._kept.get(embedder)
            if kept is None:
                kept = self._kept[embedder] = self._factory(embedder)
            return kept


_KEPT = PerEmbedder(ClauseVectors)


def clause_vectors(embedder: Embedder) -> ClauseVectors:
    """The process's clause vectors for this embedder (one per engine, kept with it)."""
    return _KEPT(embedder)
