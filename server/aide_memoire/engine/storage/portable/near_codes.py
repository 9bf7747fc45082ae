"""``near_codes``: the near-duplicate check's hashing codes kept in the store (step 16).

A slice is one (embedding space, namespace); ``coded_to`` is the rowid up to which every
row of the slice's deduplicated kinds has its codes. A code row is (slice, band << 16 |
code, memory rowid); a deleted memory's codes go with it (trigger, or cascade).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..protocol import Connection

__all__ = ["PortableNearCodes"]


class PortableNearCodes:
    @staticmethod
    def slice_of(tx: Connection, space: str, namespace: str) -> tuple[int, int]:
        """(slice id, coded_to), the slice made on first use."""
        sql = "SELECT id, coded_to FROM near_code_slices WHERE space = ? AND namespace = ?"
        row = tx.execute(sql, (space, namespace)).fetchone()
        if row is None:
            tx.execute("INSERT INTO near_code_slices (space, namespace, coded_to) "
                       "VALUES (?, ?, 0) ON CONFLICT DO NOTHING", (space, namespace))
            row = tx.execute(sql, (space, namespace)).fetchone()
        return int(row[0]), int(row[1])

    @staticmethod
    def coded(tx: Connection, slice_id: int, coded_to: int) -> None:
        tx.execute("UPDATE near_code_slices SET coded_to = ? WHERE id = ? AND coded_to < ?",
                   (coded_to, slice_id, coded_to))

    @staticmethod
    def add(tx: Connection, rows: Iterable[tuple[int, int, int]]) -> None:
        """(slice, key, memory rowid) rows; a repeat is ignored."""
        tx.executemany("INSERT INTO near_codes (slice, code, memory_rowid) VALUES (?, ?, ?) "
                       "ON CONFLICT DO NOTHING", rows)

    @staticmethod
    def found(conn: Connection, slice_id: int, keys: Sequence[int]) -> list[tuple[int, int]]:
        """(key, memory rowid) of every row under ``keys`` (one probe of the primary key
        each; the buckets are kept small by ``prune``)."""
        if not keys:
            return []
        sql = (f"SELECT code, memory_rowid FROM near_codes WHERE slice = ? AND code IN "
               f"({', '.join('?' * len(keys))})")
        return [(int(k), int(r)) for k, r in conn.execute(sql, [slice_id, *keys]).fetchall()]

    @staticmethod
    def prune(tx: Connection, slice_id: int, cuts: Iterable[tuple[int, int]]) -> None:
        """Drop each (key, rowid)'s rows below that rowid: a bucket keeps its newest."""
        tx.executemany("DELETE FROM near_codes WHERE slice = ? AND code = ? "
                       "AND memory_rowid < ?", [(slice_id, k, r) for k, r in cuts])
