"""What one read-only snapshot reads once: the facts every recall asks for, and a memo.

A recall on PostgreSQL was 13 statements, each a round trip to a server process that
has to be scheduled among the machine's other work (7-26 ms apiece at load 20, for
1-2 ms of work): BEGIN, ``max(rowid)`` twice, the space's table, the namespace's vector
state, the words' document counts twice, then rows, usage and supersession of the same
candidates one statement each (docs/postgres.md, "Round trips"). Inside one REPEATABLE
READ READ ONLY transaction nothing of this can change, so:

- :func:`begin` sends BEGIN and :data:`FACTS` (the highest rowid, every embedding space's
  table, the vector state of a store with few namespaces, and the snapshot itself:
  recall's caches are keyed by it, store_state.py) as one simple-protocol string: one
  round trip where there were four;
- :func:`memo` is that transaction's dict, where the repositories keep what they read
  (word counts, rows with their usage and supersession) for the next caller asking the
  same; it is None in a write transaction (whose own writes would make it stale) and
  outside any transaction.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import psycopg

from ..protocol import Connection
from .connection import PgConnection
from .errors import translate as translate_error

__all__ = ["FACTS", "STATE_ROWS", "begin", "memo"]

# A store with more namespaces than this reads its vector state per recall, as before:
# the facts stay one small row whatever the store.
STATE_ROWS = 64

FACTS = (
    "SELECT (SELECT COALESCE(max(rowid), 0) FROM memories), "
    "(SELECT coalesce(json_agg(json_build_array(key, table_name)), '[]') FROM vector_spaces), "
    "(SELECT coalesce(json_agg(json_build_array(space, namespace, max_rowid, epoch)), '[]') "
    f"FROM (SELECT * FROM vector_state LIMIT {STATE_ROWS + 1}) AS s), "
    "pg_current_snapshot()::text"
)


def begin(conn: PgConnection, statement: str) -> None:
    """Open the read-only transaction ``statement`` and fill its memo with :data:`FACTS`."""
    try:
        with conn.raw.cursor() as cursor:
            # No parameters, two statements: the simple protocol sends both at once.
            cursor.execute(f"{statement}; {FACTS}".encode())
            cursor.nextset()
            found = cursor.fetchone()
    except psycopg.Error as exc:
        raise translate_error(exc, conn.where) from exc
    assert found is not None
    max_rowid, spaces, states, snapshot = found
    facts: dict[Hashable, Any] = {
        "max_rowid": int(max_rowid),
        "snapshot": str(snapshot),
        "tables": {str(key): str(table) for key, table in spaces},
    }
    if len(states) <= STATE_ROWS:
        facts["vector_state"] = {(str(s), str(ns)): (int(m), int(e)) for s, ns, m, e in states}
    conn.memo = facts


def memo(conn: Connection) -> dict[Hashable, Any] | None:
    """The open read-only snapshot's memo, or None (a write, SQLite, no transaction)."""
    return conn.memo if isinstance(conn, PgConnection) else None
