"""Dense vectors: the SQLite vector index and the in-process mirror recall scores.

The SQL lives in engine/storage/sqlite/vectors.py (the vec0 tables); recall scores *every*
vector of the namespace through the shared, bounded mirror (engine/recall/mirror.py) that
follows the table through ``vector_state``; near-duplicate checks use the same copy.
These names are the ones the engine imported before the data layer existed.
"""

from __future__ import annotations

from ..recall.mirror import NEIGHBOUR_WEIGHTS, VectorMirror, sign_bits
from .sqlite.vectors import CHUNK_MAX, CHUNK_MIN, SqliteVectorIndex, chunk_size_for

__all__ = [
    "CHUNK_MAX", "CHUNK_MIN", "NEIGHBOUR_WEIGHTS", "VectorCache", "VectorMirror", "VectorTables",
    "chunk_size_for", "sign_bits",
]

VectorCache = VectorMirror  # the name recall and older callers import
VectorTables = SqliteVectorIndex
