"""Late interaction: the prompt's words matched one by one against a memory's words.

Mean pooling makes one vector of a memory, so a prompt that names one concept of it
("my coroutine checks never ran") meets the average of all its concepts. The same model's
token vectors, before pooling, keep each word in its context: for each content word of
the prompt, its best cosine to any token of the memory, averaged over the prompt's content
words (MaxSim, as in late-interaction retrievers), says how much of what the prompt asks
the memory holds, word by word, in meaning rather than in spelling.

``TokenVectors`` runs the model's transformer for the few best candidates of a prompt
(gate.GateTuning.late_candidates) and the prompt, each text alone (a batch pads, and the
int8 copy quantises per call), and keeps each memory's token vectors in the process (the
plugin's MCP server lives for the session, so a memory is encoded once). Only the ONNX
encoder (the default runtime) is read: for another runtime ``available`` is False and the
gate goes without. The cold hook process has no model and never comes here.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..engine.core.text import STOP_WORDS
from .clauses import PerEmbedder

if TYPE_CHECKING:
    from ..engine.recall.embed import Embedder

__all__ = ["TokenVectors", "content_rows", "maxsim", "token_vectors"]


def content_rows(tokens: Sequence[str], word_ids: Sequence[int | None]) -> list[int]:
    """The rows of the tokens that belong to a content word (special tokens, punctuation
    and stop words out)."""
    words: dict[int, str] = {}
    for token, word in zip(tokens, word_ids, strict=True):
        if word is not None:
            words[word] = words.get(word, "") + token.removeprefix("##")
    keep = {w for w, text in words.items()
            if any(c.isalnum() for c in text) and text.lower() not in STOP_WORDS}
    return [i for i, w in enumerate(word_ids) if w is not None and w in keep]


def maxsim(query: Any, doc: Any) -> float:
    """Mean over the query's rows of each row's best cosine to a row of ``doc``."""
    if len(query) == 0 or len(doc) == 0:
        return 0.0
    return float((query @ doc.T).max(axis=1).mean())


class TokenVectors:
    """Per text, the unit token vectors of its content words, kept (bounded)."""

    def __init__(self, embedder: Embedder, *, capacity: int = 5_000) -> None:
        self.embedder = embedder
        self.capacity = capacity
        self._cache: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()
        self.encoded = 0  # texts run through the model so far

    @property
    def available(self) -> bool:
        from ..engine.recall.onnx_encoder import OnnxEncoder

        return self.embedder.ready and isinstance(self.embedder._model, OnnxEncoder)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def _encode(self, text: str) -> Any:
        import numpy as np

        encoder = self.embedder._model
        e = encoder.tokenizer.encode(text)
        ids = np.array([e.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                "token_type_ids": np.array([e.type_ids], dtype=np.int64)}
        hidden = encoder.session.run(
            None, {k: v for k, v in feed.items() if k in encoder.inputs})[0][0]
        rows = hidden[content_rows(e.tokens, e.word_ids)]
        norms = np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
        return np.ascontiguousarray(rows / norms, dtype=np.float32)

    def of(self, text: str, *, keep: bool = True) -> Any:
        space = self.embedder.space
        key = (space.key if space is not None else "", text)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        vectors = self._encode(text)
        with self._lock:
            self.encoded += 1
            if keep:
                self._cache[key] = vectors
                while len(self._cache) > self.capacity:
                    self._cache.popitem(last=False)
        return vectors

    def scores(self, prompt: str, texts: Sequence[str]) -> list[float]:
        """The prompt's MaxSim against each text (the prompt is not kept)."""
        query = self.of(prompt, keep=False)
        return [maxsim(query, self.of(t)) for t in texts]


_KEPT = PerEmbedder(TokenVectors)


def token_vectors(embedder: Embedder) -> TokenVectors:
    """The process's token vectors for this embedder (one per engine, kept with it)."""
    return _KEPT(embedder)
