"""Vectors in exports: which stored space to write, and base64 float32 in and out.

An export made ``with_vectors`` names its embedding space in the header and carries
each memory's vector as base64 of little-endian float32; an import into a store whose
active space is the same uses them instead of encoding again. Any other space is ignored
and the rows are encoded (or left to ``reembed`` when the model is off).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import InvalidInput, ModelUnavailable
from ..core.space import EmbeddingSpace
from ..recall.embed import PACKAGED_MODEL, Embedder, resolve_model
from ..storage.protocol import Connection
from ..storage.repositories import VectorIndex

__all__ = ["decode_vector", "encode_vector", "model_name", "stored_space", "vector_lookup"]


def model_name(embedder: Embedder) -> str | None:
    """The name the configured model's vectors are recorded under, without loading it."""
    if embedder.space is not None:
        return embedder.space.model
    if embedder.spec == PACKAGED_MODEL:
        return embedder.space_name(PACKAGED_MODEL)
    try:
        return embedder.space_name(Path(resolve_model(embedder.spec)).name)
    except ModelUnavailable:
        return None


def stored_space(
    conn: Connection,
    tables: VectorIndex,
    embedder: Embedder,
) -> EmbeddingSpace | None:
    """The stored space of the configured model (None if it has no vectors here)."""
    if not embedder.enabled:
        return None
    name = model_name(embedder)
    for key, model, dim, _ in reversed(tables.spaces(conn)):
        if model == name and (embedder.space is None or embedder.space.key == key):
            return EmbeddingSpace(model=model, dim=dim)
    return None


def vector_lookup(conn: Connection, tables: VectorIndex, space: EmbeddingSpace) -> Any:
    """A function from memory id to its base64 vector (None if it has none)."""
    def lookup(memory_id: str) -> str | None:
        found = tables.embedding_of(conn, space, memory_id)
        return base64.b64encode(found).decode("ascii") if found is not None else None

    return lookup


def encode_vector(vector: Any) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: object, dim: int, line: int) -> Any:
    try:
        raw = base64.b64decode(str(text), validate=True)
    except ValueError:
        raise InvalidInput(f"import line {line}: 'vector' is not base64") from None
    if len(raw) != 4 * dim:
        raise InvalidInput(f"import line {line}: 'vector' has {len(raw) // 4} values, not {dim}")
    return np.frombuffer(raw, dtype="<f4")
