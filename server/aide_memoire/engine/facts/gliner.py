"""GLiNER entity spans, when the user configured a GLiNER model present on this machine.

Optional (the ``extract`` extra). The model is loaded from a local folder only, with the
hub switched off, on first use; if the package or the folder is missing, extraction is
rules-only and :meth:`GlinerSpans.stage` says why.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...logs import get_logger
from .entities import Mention, normalise

__all__ = ["DEFAULT_LABELS", "GlinerSpans"]

log = get_logger(__name__)

DEFAULT_LABELS = ("person", "organization", "location", "product", "event")
THRESHOLD = 0.5
_TYPES = {"organization": "organization", "location": "place", "person": "person"}


class GlinerSpans:
    """Callable as the fact writer's span finder: texts -> mentions per text."""

    def __init__(
        self, path: str | os.PathLike[str], *, labels: Sequence[str] = DEFAULT_LABELS,
        threshold: float = THRESHOLD,
    ) -> None:
        self.path = Path(path)
        self.labels = list(labels)
        self.threshold = threshold
        self.error: str | None = None
        self._model: Any = None
        self._lock = threading.Lock()

    def available(self) -> bool:
        """True if the package imports and the folder holds a GLiNER model (not loaded)."""
        if not (self.path / "gliner_config.json").is_file():
            self.error = f"no GLiNER model at {self.path} (gliner_config.json missing)"
            return False
        try:
            import gliner  # noqa: F401
        except ImportError:
            self.error = "the gliner package is not installed (pip install 'aide-memoire[extract]')"
            return False
        return self.error is None

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local folder, never the hub
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    from gliner import GLiNER

                    self._model = GLiNER.from_pretrained(str(self.path), local_files_only=True)
                log.info("gliner_loaded", path=str(self.path))
            return self._model

    def __call__(self, texts: Sequence[str]) -> list[list[Mention]]:
        if not texts:
            return []
        try:
            model = self._load()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found = model.inference(list(texts), self.labels, threshold=self.threshold)
        except Exception as exc:  # a broken model must not fail the write: rules still run
            self.error = f"GLiNER failed: {exc}"
            log.warning("gliner_failed", error=str(exc))
            return [[] for _ in texts]
        out: list[list[Mention]] = []
        for spans in found:
            mentions: dict[str, Mention] = {}
            for span in spans:
                key = normalise(str(span.get("text", "")))
                if key and len(key) > 1:
                    label = str(span.get("label", "name"))
                    mentions.setdefault(key, Mention(key, str(span["text"]), _TYPES.get(
                        label, label)))
            out.append(list(mentions.values()))
        return out
