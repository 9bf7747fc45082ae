"""The general-update detector's reads and writes on the owned tables, on either backend.

engine/facts/updates.py decides which newer memory updates which older one; the rows,
vectors and term index it reads and the link it writes are here. The SQL is portable
(``ON CONFLICT DO NOTHING``; point lookups by ``rowid``, which sqlite-vec's vec0 answers
and pgvector's tables hold as a column, read back as float32 bytes on both), so the
PostgreSQL backend runs it as written. Its own tables (memory_updates) keep their
portable SQL in the feature.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..protocol import Connection

__all__ = ["add_terms", "earlier_turns", "embeddings_by_rowid", "mark_updated_by",
           "update_rows"]


def add_terms(tx: Connection, rows: Sequence[tuple[str, str, int]]) -> None:
    """(namespace, term, memory rowid) per signature term; a repeat is kept once."""
    tx.executemany(
        "INSERT INTO memory_terms (namespace, term, memory_rowid) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        rows,
    )


def mark_updated_by(tx: Connection, namespace: str, old_id: str, new_id: str, at: str) -> bool:
    """Name ``new_id`` as the replacement of an active memory that has none yet; False
    when nothing changed."""
    return bool(tx.execute(
        "UPDATE memories SET superseded_by = ?, updated_at = ? WHERE id = ? AND namespace = ? "
        "AND superseded_by IS NULL AND status = 'active'",
        (new_id, at, old_id, namespace),
    ).rowcount)


def update_rows(conn: Connection, rowids: Sequence[int]) -> list[tuple[Any, ...]]:
    """(rowid, id, kind, status, observed_at, created_at, superseded_by, content, speaker)
    of the given rows that exist."""
    return [tuple(r) for r in conn.execute(
        f"SELECT rowid, id, kind, status, observed_at, created_at, superseded_by, content, "
        f"speaker FROM memories WHERE rowid IN ({','.join('?' * len(rowids))})",
        list(rowids),
    )]


def earlier_turns(conn: Connection, namespace: str, session_id: str, before: str,
                  limit: int) -> list[tuple[Any, ...]]:
    """(rowid, id, speaker, session_id, position, observed_at, content, superseded_by) of
    the ``limit`` latest active turns of ``namespace`` said in another session before
    ``before`` (an observed time): the turn-link path's candidates, bounded by the limit
    (the (namespace, status) index is walked newest first)."""
    return [tuple(r) for r in conn.execute(
        "SELECT rowid, id, speaker, session_id, position, observed_at, content, superseded_by "
        "FROM memories WHERE namespace = ? AND status = 'active' AND kind = 'turn' "
        "AND session_id IS NOT NULL AND session_id != ? AND observed_at < ? "
        "ORDER BY rowid DESC LIMIT ?",
        (namespace, session_id, before, limit),
    )]


def embeddings_by_rowid(conn: Connection, table: str, rowids: Sequence[int]) -> dict[int, bytes]:
    """The stored vector blob of each given row that has one in vec0 ``table``."""
    out: dict[int, bytes] = {}
    for rowid in rowids:  # vec0 answers point lookups by rowid; IN lists are not planned
        found = conn.execute(f"SELECT embedding FROM {table} WHERE rowid = ?",
                             (rowid,)).fetchone()
        if found is not None:
            out[rowid] = bytes(found[0])
    return out
