"""The code index's dense vectors (``code_vectors``): one float32 blob per chunk, tagged
with the embedding space that made it (engine/code/vectors.py encodes and ranks)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..protocol import Connection

__all__ = ["chunk_labels", "delete", "marker", "put", "rows"]


def chunk_labels(tx: Connection, ids: Sequence[int],
                 ) -> dict[int, tuple[str | None, str, str | None, str]]:
    """(name, path, signature, kind) by chunk id: what a chunk's dense text is made of."""
    return {
        int(cid): (name, path, sig, kind)
        for cid, name, path, sig, kind in tx.execute(
            "SELECT c.id, c.name, f.path, "
            "(SELECT s.signature FROM code_symbols s WHERE s.chunk_id = c.id LIMIT 1), "
            "c.kind "
            "FROM code_chunks c JOIN code_files f ON f.id = c.file_id "
            f"WHERE c.id IN ({','.join('?' * len(ids))})",
            list(ids),
        )
    }


def put(tx: Connection, rows: Iterable[tuple[int, int, str, bytes]]) -> None:
    """(chunk id, root id, space key, float32 bytes) each, replacing a chunk's old one."""
    tx.executemany(
        "INSERT OR REPLACE INTO code_vectors (chunk_id, root_id, space, embedding) "
        "VALUES (?, ?, ?, ?)", list(rows))


def delete(tx: Connection, chunk_ids: Sequence[int]) -> None:
    tx.executemany("DELETE FROM code_vectors WHERE chunk_id = ?", [(i,) for i in chunk_ids])


def marker(conn: Connection, root: int, space: str) -> tuple[Any, ...]:
    """What changes when the root's vectors of ``space`` do: their count, largest and
    summed chunk ids, and the root's last index time."""
    return (
        *conn.execute(
            "SELECT count(*), max(chunk_id), total(chunk_id) FROM code_vectors "
            "WHERE root_id = ? AND space = ?", (root, space)).fetchone(),
        *conn.execute("SELECT indexed_at FROM code_roots WHERE id = ?", (root,)).fetchone(),
    )


def rows(conn: Connection, root: int, space: str) -> list[tuple[int, bytes]]:
    """(chunk id, float32 bytes) of the root's vectors of ``space``, by chunk id."""
    return [(int(cid), bytes(blob)) for cid, blob in conn.execute(
        "SELECT chunk_id, embedding FROM code_vectors WHERE root_id = ? AND space = ? "
        "ORDER BY chunk_id", (root, space))]
