"""The trust tables: the audit chain, the review queue, findings and size statistics.

Portable SQL only (``?`` placeholders, ``ON CONFLICT ... DO UPDATE``, no SQLite
functions), so every backend runs these statements as written through its
:class:`~.protocol.Connection`. The hashing, chain checks and screening that decide
what goes in stay in engine/trust/; this module reads and writes rows, and holds the
chain's format (``event_hash``, ``append_event``) because a schema step writes an event
too (step 12 seals the memories already stored), and storage imports no feature.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from typing import Any

from ..core import clock
from .protocol import Connection, Row

__all__ = ["AUDIT_FIELDS", "GENESIS", "REVIEW_FIELDS", "AuditLog", "Findings", "ReviewQueue",
           "SizeStats", "append_event", "canonical", "event_hash"]

AUDIT_FIELDS = "seq, at, actor, action, namespace, memory_id, content_hash, detail, prev_hash, hash"
# A review item with the text of the memory it is about (None once that is forgotten).
REVIEW_FIELDS = (
    "r.id, r.namespace, r.kind, r.memory_id, m.content, r.evidence, r.status, r.created_at, "
    "r.expires_at, r.decided_at, r.decided_by, r.note"
)
_REVIEW_FROM = "FROM review_items r LEFT JOIN memories m ON m.id = r.memory_id"

GENESIS = "0" * 64


class AuditLog:
    """``audit_events`` (append-only) and ``audit_head`` (its last link)."""

    @staticmethod
    def head(conn: Connection) -> tuple[int, str] | None:
        found = conn.execute("SELECT seq, hash FROM audit_head WHERE id = 1").fetchone()
        return (int(found[0]), str(found[1])) if found else None

    @staticmethod
    def top_seq(conn: Connection) -> int:
        """The highest sequence number stored (an index lookup), 0 for an empty log."""
        return int(conn.execute("SELECT max(seq) FROM audit_events").fetchone()[0] or 0)

    @staticmethod
    def append(tx: Connection, values: Sequence[Any]) -> None:
        """One event, its values in AUDIT_FIELDS order; the head moves to it."""
        tx.execute(
            f"INSERT INTO audit_events ({AUDIT_FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            tuple(values),
        )
        tx.execute(
            "INSERT INTO audit_head (id, seq, hash) VALUES (1, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
            (values[0], values[-1]),
        )

    @staticmethod
    def events(conn: Connection, memory_id: str | None = None) -> Iterator[Row]:
        """Events (of one memory, or all), in AUDIT_FIELDS order, oldest first, streamed."""
        if memory_id is None:
            cursor = conn.execute(f"SELECT {AUDIT_FIELDS} FROM audit_events ORDER BY seq")
        else:
            cursor = conn.execute(
                f"SELECT {AUDIT_FIELDS} FROM audit_events WHERE memory_id = ? ORDER BY seq",
                (memory_id,),
            )
        for values in cursor:
            yield tuple(values)

    @staticmethod
    def hash_at(conn: Connection, seq: int) -> str | None:
        found = conn.execute("SELECT hash FROM audit_events WHERE seq = ?", (seq,)).fetchone()
        return str(found[0]) if found else None

    @staticmethod
    def audited_texts(conn: Connection) -> Iterator[tuple[str, str, str, str | None]]:
        """(memory id, text, stored text hash, hash its last audited change recorded),
        every memory in rowid order."""
        rows = conn.execute(
            "SELECT m.id, m.content, m.content_hash, (SELECT e.content_hash FROM audit_events e "
            "WHERE e.memory_id = m.id AND e.content_hash IS NOT NULL ORDER BY e.seq DESC LIMIT 1) "
            "FROM memories m ORDER BY m.rowid"
        )
        for memory_id, content, stored, audited in rows:
            yield str(memory_id), str(content), str(stored), audited



def canonical(event: dict[str, Any]) -> str:
    return json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def event_hash(prev_hash: str, event: dict[str, Any]) -> str:
    """sha256 of the previous hash and the event's canonical JSON (without its own hash)."""
    return hashlib.sha256(f"{prev_hash}\n{canonical(event)}".encode()).hexdigest()


def append_event(
    tx: Connection,
    *,
    actor: str,
    action: str,
    namespace: str | None = None,
    memory_id: str | None = None,
    content_hash: str | None = None,
    detail: dict[str, Any] | None = None,
) -> int:
    """Append one event in the caller's write transaction; returns its sequence number."""
    head_seq, prev_hash = AuditLog.head(tx) or (0, GENESIS)
    # max(seq) is an O(log n) index lookup; it keeps seq unique even if rows were added
    # behind the head's back (verify reports that; writes must not start failing).
    seq = max(head_seq, AuditLog.top_seq(tx)) + 1
    detail = detail or {}
    event: dict[str, Any] = {
        "seq": seq,
        "at": clock.format_time(clock.now()),
        "actor": actor,
        "action": action,
        "namespace": namespace,
        "memory_id": memory_id,
        "content_hash": content_hash,
        "detail": detail,
    }
    digest = event_hash(prev_hash, event)
    AuditLog.append(tx, (
        seq, event["at"], actor, action, namespace, memory_id, content_hash,
        canonical(detail), prev_hash, digest,
    ))
    return seq


class ReviewQueue:
    """``review_items``: rows in REVIEW_FIELDS order, decisions compare-and-set."""

    @staticmethod
    def insert(tx: Connection, values: Sequence[Any]) -> None:
        """(id, namespace, kind, memory_id, evidence JSON, created_at, expires_at)."""
        tx.execute(
            "INSERT INTO review_items (id, namespace, kind, memory_id, evidence, status, "
            "created_at, expires_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
            tuple(values),
        )

    @staticmethod
    def select(
        conn: Connection,
        *,
        status: str,
        namespace: str | None,
        kind: str | None,
        unexpired_at: str | None,
        limit: int,
    ) -> list[Row]:
        """Items in one status, oldest first (unexpired at the given moment, if given)."""
        clauses, params = ["r.status = ?"], [status]
        if namespace is not None:
            clauses.append("r.namespace = ?")
            params.append(namespace)
        if kind is not None:
            clauses.append("r.kind = ?")
            params.append(kind)
        if unexpired_at is not None:
            clauses.append("(r.expires_at IS NULL OR r.expires_at > ?)")
            params.append(unexpired_at)
        rows = conn.execute(
            f"SELECT {REVIEW_FIELDS} {_REVIEW_FROM} WHERE {' AND '.join(clauses)} "
            "ORDER BY r.created_at, r.id LIMIT ?",
            [*params, limit],
        )
        return [tuple(values) for values in rows]

    @staticmethod
    def get(conn: Connection, item_id: str) -> Row | None:
        found = conn.execute(
            f"SELECT {REVIEW_FIELDS} {_REVIEW_FROM} WHERE r.id = ?", (item_id,)
        ).fetchone()
        return tuple(found) if found else None

    @staticmethod
    def settle(
        tx: Connection, item_id: str, status: str, *, at: str, actor: str, note: str | None
    ) -> bool:
        """A pending item unexpired at ``at`` becomes ``status``; False if it was not."""
        cursor = tx.execute(
            "UPDATE review_items SET status = ?, decided_at = ?, decided_by = ?, note = ? "
            "WHERE id = ? AND status = 'pending' AND (expires_at IS NULL OR expires_at > ?)",
            (status, at, actor, note, item_id, at),
        )
        return cursor.rowcount == 1

    @staticmethod
    def expire_for_memory(tx: Connection, memory_id: str, *, at: str, actor: str,
                          note: str) -> None:
        tx.execute(
            "UPDATE review_items SET status = 'expired', decided_at = ?, decided_by = ?, "
            "note = ? WHERE memory_id = ? AND status = 'pending'",
            (at, actor, note, memory_id),
        )

    @staticmethod
    def expire_due(tx: Connection, *, at: str, actor: str, item_id: str | None) -> int:
        only = " AND id = ?" if item_id is not None else ""
        cursor = tx.execute(
            "UPDATE review_items SET status = 'expired', decided_at = ?, decided_by = ?, "
            "note = 'expired unreviewed' WHERE status = 'pending' AND expires_at IS NOT NULL "
            f"AND expires_at <= ?{only}",
            (at, actor, at, *([item_id] if item_id is not None else [])),
        )
        return int(cursor.rowcount)

    @staticmethod
    def pending_count(conn: Connection, namespace: str, kinds: Sequence[str], *, now: str) -> int:
        """Pending items of ``kinds`` in a namespace that have not expired by ``now``."""
        (count,) = conn.execute(
            "SELECT count(*) FROM review_items WHERE namespace = ? AND status = 'pending' "
            f"AND kind IN ({','.join('?' * len(kinds))}) "
            "AND (expires_at IS NULL OR expires_at > ?)",
            (namespace, *kinds, now),
        ).fetchone()
        return int(count)

    @staticmethod
    def overdue_count(conn: Connection, namespace: str, *, now: str) -> int:
        """Pending items of a namespace whose expiry has passed by ``now``."""
        (count,) = conn.execute(
            "SELECT count(*) FROM review_items WHERE namespace = ? AND status = 'pending' "
            "AND expires_at IS NOT NULL AND expires_at <= ?", (namespace, now),
        ).fetchone()
        return int(count)


class Findings:
    """``memory_findings``: what the screens found in a memory, field by field."""

    @staticmethod
    def add(tx: Connection, memory_id: str, rows: Sequence[Sequence[Any]]) -> None:
        """(category, rule, start, end, confidence, field) per finding."""
        if rows:
            tx.executemany(
                # "end" quoted: a reserved word in PostgreSQL, a plain name to SQLite.
                'INSERT INTO memory_findings (memory_id, category, rule, start, "end", '
                "confidence, field) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(memory_id, *row) for row in rows],
            )

    @staticmethod
    def drop_field(tx: Connection, memory_id: str, name: str) -> None:
        """A field's findings (and its sub-fields', e.g. ``metadata.key``)."""
        tx.execute(
            "DELETE FROM memory_findings WHERE memory_id = ? AND (field = ? OR field LIKE ?)",
            (memory_id, name, f"{name}%"),
        )


class SizeStats:
    """``namespace_sizes``: count, sum and sum of squares of log text length."""

    @staticmethod
    def get(conn: Connection, namespace: str) -> tuple[int, float, float] | None:
        found = conn.execute(
            "SELECT count, sum_log, sum_log_sq FROM namespace_sizes WHERE namespace = ?",
            (namespace,),
        ).fetchone()
        if not found or not found[0]:
            return None
        return int(found[0]), float(found[1]), float(found[2])

    @staticmethod
    def add(tx: Connection, namespace: str, log_length: float) -> None:
        tx.execute(
            "INSERT INTO namespace_sizes (namespace, count, sum_log, sum_log_sq) "
            # Qualified: in PostgreSQL a bare name in DO UPDATE is ambiguous (SQLite
            # accepts both).
            "VALUES (?, 1, ?, ?) ON CONFLICT (namespace) DO UPDATE SET "
            "count = namespace_sizes.count + 1, "
            "sum_log = namespace_sizes.sum_log + excluded.sum_log, "
            "sum_log_sq = namespace_sizes.sum_log_sq + excluded.sum_log_sq",
            (namespace, log_length, log_length * log_length),
        )
