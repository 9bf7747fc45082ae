"""Answers remembered for as long as the store holds the same rows.

Recall's caches (document counts, common words, speaker names) are keyed by the store's
write marker (``write_marker`` of the keyword source: what changes whenever the keyword
index does, whoever wrote), never by the clock: a recall is a function of the store's
state, so a process that has run for days ranks as one that just opened the file.
A marker of None (a backend without one) remembers nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterable, Mapping
from typing import Generic, TypeVar

__all__ = ["StateCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class StateCache(Generic[K, V]):
    """Values per key, all forgotten when the marker they were read under changes."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._marker: Hashable | None = None
        self._seen: dict[K, V] = {}
        self._lock = threading.Lock()

    def known(self, marker: Hashable | None, keys: Iterable[K]) -> dict[K, V]:
        """The remembered values of ``keys`` as of ``marker`` (the others are absent)."""
        if marker is None:
            return {}
        with self._lock:
            if marker != self._marker:
                return {}
            return {k: self._seen[k] for k in keys if k in self._seen}

    def keep(self, marker: Hashable | None, values: Mapping[K, V]) -> None:
        """Remember ``values``, read under ``marker``."""
        if marker is None:
            return
        with self._lock:
            if marker != self._marker:
                self._seen.clear()
                self._marker = marker
            elif len(self._seen) > self.size:
                self._seen.clear()
            self._seen.update(values)

    def drop(self, key: K) -> None:
        with self._lock:
            self._seen.pop(key, None)
