"""The int8 form of a stored vector, shared by the vector blocks (storage) and the mirror
(engine/recall/mirror.py), so a row read from a block and one quantised from vec0 are the
same bytes.

A row keeps int8 components (its largest at +-127) and one float32 scale; its sign bits
come from the int8 row. A block packs many rows: rowids, scales, kind codes, sign bits
and vectors, each one array's bytes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core.validate import KINDS

__all__ = ["TURN", "Packed", "concat", "kind_code", "pack", "quantise", "sign_bits", "to_blobs",
           "unpack", "words"]

TURN = 255  # kind code of a session turn (never a near-duplicate candidate)
_KIND_CODE = {kind: code for code, kind in enumerate(KINDS)}


def kind_code(kind: str, turn: bool) -> int:
    return TURN if turn else _KIND_CODE.get(kind, TURN)


def words(dim: int) -> int:
    """uint64 words of a row's sign bits."""
    return (dim + 63) // 64


def quantise(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row as int8 (its largest component at +-127) and the float32 scale that
    turns it back into the row; a zero row gets scale 0."""
    vectors = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(vectors).max(axis=1) if vectors.size else np.zeros(len(vectors), np.float32)
    scale = (peak / 127).astype(np.float32)
    safe = np.where(scale > 0, scale, 1).astype(np.float32)
    q = np.rint(vectors / safe[:, None]).clip(-127, 127).astype(np.int8)
    return q, scale


def sign_bits(vectors: np.ndarray, count: int) -> np.ndarray:
    """Each row's signs packed into ``count`` uint64 (1 = positive)."""
    packed = np.packbits(vectors > 0, axis=1)
    padded = np.zeros((len(vectors), count * 8), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    return padded.view(np.uint64)


class Packed(NamedTuple):
    """One block's rows, rowid ascending: bits are (rows, words)."""

    rowids: np.ndarray
    scales: np.ndarray
    kinds: np.ndarray
    bits: np.ndarray
    vectors: np.ndarray

    def __len__(self) -> int:
        return len(self.rowids)

    def keep(self, mask: np.ndarray) -> Packed:
        return Packed(*(a[mask] for a in self))


def pack(rowids: np.ndarray, raw: np.ndarray, kinds: np.ndarray) -> Packed:
    """Rows from their float32 vectors (any order in; rowid ascending out)."""
    order = np.argsort(rowids, kind="stable")
    q, scale = quantise(np.asarray(raw, np.float32)[order])
    return Packed(np.asarray(rowids, np.int64)[order], scale,
                  np.asarray(kinds, np.uint8)[order], sign_bits(q, words(q.shape[1])), q)


def to_blobs(block: Packed) -> tuple[bytes, bytes, bytes, bytes, bytes]:
    return tuple(np.ascontiguousarray(a).tobytes() for a in block)  # type: ignore[return-value]


def unpack(blobs: tuple[bytes, bytes, bytes, bytes, bytes], dim: int) -> Packed:
    rowids = np.frombuffer(blobs[0], np.int64)
    return Packed(rowids, np.frombuffer(blobs[1], np.float32), np.frombuffer(blobs[2], np.uint8),
                  np.frombuffer(blobs[3], np.uint64).reshape(len(rowids), words(dim)),
                  np.frombuffer(blobs[4], np.int8).reshape(len(rowids), dim))


def concat(blocks: list[Packed]) -> Packed:
    """Blocks joined and sorted by rowid."""
    if len(blocks) == 1:
        return blocks[0]
    joined = Packed(*(np.concatenate(parts) for parts in zip(*blocks, strict=True)))
    if len(joined) > 1 and bool((np.diff(joined.rowids) <= 0).any()):
        return joined.keep(np.argsort(joined.rowids, kind="stable"))
    return joined
