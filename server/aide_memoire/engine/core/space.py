"""Which model made a vector: shared by storage (a vector table per space) and recall."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

__all__ = ["EmbeddingSpace"]


@dataclass(frozen=True)
class EmbeddingSpace:
    """Which model made a vector, and its size: vectors of different spaces never mix."""

    model: str
    dim: int

    @property
    def key(self) -> str:
        digest = hashlib.sha256(f"{self.model}|{self.dim}".encode()).hexdigest()[:12]
        return f"{self.dim}_{digest}"
