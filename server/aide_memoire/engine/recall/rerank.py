"""The optional re-ranker: a sentence-transformers CrossEncoder from a local folder.

After fusion, the best ``depth`` candidates are read again with the query by the
cross-encoder; its probability (sigmoid of the logit) orders them, and those under the
confidence floor are dropped. The floor scales with the requested limit: a caller asking
for 3 memories wants only confident ones, one asking for 50 wants breadth, so

    floor = base_floor * min(1, 10 / limit)

(base_floor at limit 10 or less, half of it at 20, a fifth at 50). Nothing is fetched:
the model is a local folder (no weights for one ship on PyPI); it loads once per
process, off the request path when the server warms it.
"""

from __future__ import annotations

import importlib.util
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...logs import get_logger
from ..core.errors import ModelUnavailable
from .embed import _offline

__all__ = ["Reranker", "RerankTuning", "floor_for"]

log = get_logger(__name__)

_LOADED: dict[str, Any] = {}
_LOAD_LOCK = threading.Lock()


@dataclass(frozen=True)
class RerankTuning:
    depth: int = 30  # candidates read again (at least the requested limit)
    base_floor: float = 0.05  # probability under which a hit is dropped, at limit <= 10


def floor_for(limit: int, base_floor: float) -> float:
    return base_floor * min(1.0, 10.0 / max(1, limit))


class Reranker:
    """Loads a CrossEncoder from a local folder once; scores (query, text) pairs."""

    def __init__(self, path: str | None, *, tuning: RerankTuning | None = None) -> None:
        self.path = path
        self.tuning = tuning or RerankTuning()
        self._model: Any = None
        self._error: str | None = None
        self._lock = threading.Lock()
        if not path:
            self._error = "no re-ranker configured (setting reranker_model)"
        elif importlib.util.find_spec("sentence_transformers") is None:
            self._error = "sentence-transformers is not installed (the embeddings extra)"
        elif not Path(path).expanduser().is_dir():
            self._error = f"re-ranker model folder {path!r} does not exist; nothing is downloaded"

    @property
    def configured(self) -> bool:
        return bool(self.path)

    @property
    def error(self) -> str | None:
        return self._error

    def live(self) -> bool:
        return self._error is None

    def load(self) -> bool:
        """Load the model (once per process); False, with ``error`` set, if it cannot."""
        if self._model is not None:
            return True
        if self._error is not None:
            return False
        assert self.path is not None
        with self._lock, _LOAD_LOCK:
            if self._model is None:
                try:
                    if self.path not in _LOADED:
                        _LOADED[self.path] = self._load()
                    self._model = _LOADED[self.path]
                except Exception as exc:  # noqa: BLE001 - a broken model disables the stage
                    self._error = f"re-ranker {self.path!r} failed to load: {exc}"
                    log.warning("reranker_failed", error=self._error)
        return self._model is not None

    def _load(self) -> Any:
        _offline()
        from sentence_transformers import CrossEncoder

        model = CrossEncoder(
            str(Path(str(self.path)).expanduser()), device="cpu", local_files_only=True
        )
        log.info("reranker_loaded", path=self.path)
        return model

    def probabilities(self, query: str, texts: list[str]) -> list[float]:
        """P(relevant) for each text, in order."""
        if not self.load():
            raise ModelUnavailable(self._error or "no re-ranker")
        if not texts:
            return []
        import torch

        # Raw logits (models disagree on their saved activation); the sigmoid is ours.
        logits = self._model.predict(
            [(query, text) for text in texts],
            show_progress_bar=False,
            convert_to_numpy=True,
            activation_fn=torch.nn.Identity(),
        )
        return [_sigmoid(float(x)) for x in logits.reshape(len(texts), -1)[:, -1]]


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)
