"""Dense vectors on pgvector: one table per embedding space, one partition per namespace.

As in SQLite (engine/storage/vectors.py), each embedding space (model + dimension) has its own
table, registered in ``vector_spaces``, and recall only compares vectors of one space.
The table is partitioned by namespace (LIST), and its HNSW index (cosine) is made per
partition: a search in a namespace walks that namespace's graph only, so a small
namespace beside a large one is neither slowed nor starved of results, which a filter
applied after one shared graph would do. Vectors follow their memory on delete (cascade).

HNSW is approximate: a search looks at ``hnsw.ef_search`` candidates and returns at most
that many; it is raised to ``k`` per search (up to pgvector's 1000), and a larger ``k``
is answered exactly, by a scan.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from psycopg import sql

from ...core.errors import InvalidInput
from . import security
from .connection import PgConnection, PgVector

__all__ = [
    "delete_vectors", "ensure_space", "insert_vectors", "knn", "partition_name", "table_name",
]

_KEY_RE = re.compile(r"^[0-9a-z_]+$")
_EF_MAX = 1000  # pgvector's ceiling for hnsw.ef_search
_DIM_MAX = 2000  # pgvector's HNSW limit for vector(n)


def table_name(space_key: str) -> str:
    if not _KEY_RE.match(space_key):
        raise InvalidInput(f"embedding space key {space_key!r} is not lower-case a-z, 0-9, _")
    return f"memory_vec_{space_key}"


def partition_name(table: str, namespace: str) -> str:
    # Namespaces may hold ':' and '-': a digest gives every one a plain, short name.
    return f"{table}_{hashlib.sha256(namespace.encode()).hexdigest()[:16]}"


def ensure_space(tx: PgConnection, key: str, model: str, dim: int, stamp: str) -> str:
    """The space's table, made (with its index and policy) if this is its first use."""
    table = table_name(key)
    if not 0 < dim <= _DIM_MAX:
        raise InvalidInput(f"an HNSW index holds 1 to {_DIM_MAX} dimensions, not {dim}")
    found = tx.execute("SELECT table_name, dim FROM vector_spaces WHERE key = ?", (key,))
    row = found.fetchone()
    if row is None:
        # Two processes making the first vector of a space: one makes it, one waits.
        tx.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (f"aide-memoire:{table}",))
        row = tx.execute(
            "SELECT table_name, dim FROM vector_spaces WHERE key = ?", (key,)
        ).fetchone()
    if row is not None:
        if int(row[1]) != dim:
            raise InvalidInput(f"embedding space {key} has {row[1]} dimensions, not {dim}")
        return str(row[0])
    tx.executescript(
        f"CREATE TABLE {table} (\n"
        "    rowid BIGINT NOT NULL REFERENCES memories (rowid) ON DELETE CASCADE,\n"
        "    namespace TEXT NOT NULL,\n"
        f"    embedding vector({int(dim)}) NOT NULL,\n"
        "    PRIMARY KEY (namespace, rowid)\n"
        ") PARTITION BY LIST (namespace);\n"
        f"CREATE INDEX {table}_rowid ON {table} (rowid);\n"
        f"CREATE INDEX {table}_hnsw ON {table} USING hnsw (embedding vector_cosine_ops);"
    )
    tx.execute(
        "INSERT INTO vector_spaces (key, model, dim, table_name, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (key, model, dim, table, stamp),
    )
    if security.installed(tx):
        security.protect(tx, table)
    return table


def _ensure_partition(tx: PgConnection, table: str, namespace: str) -> None:
    part = partition_name(table, namespace)
    exists = "SELECT to_regclass(?) IS NOT NULL"
    if tx.execute(exists, (part,)).fetchone()[0]:
        return
    tx.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (f"aide-memoire:{part}",))
    if tx.execute(exists, (part,)).fetchone()[0]:
        return
    value = sql.Literal(namespace).as_string(tx.raw)
    tx.executescript(f"CREATE TABLE {part} PARTITION OF {table} FOR VALUES IN ({value})")
    # Policies of the parent do not guard a partition read by its own name.
    if security.installed(tx):
        security.protect(tx, part)


def insert_vectors(tx: PgConnection, table: str, items: Sequence[tuple[int, str, Any]]) -> None:
    """Add (rowid, namespace, vector) items (a vector: any sequence of floats, or an
    array); a row's vector in this space is replaced."""
    for namespace in sorted({ns for _, ns, _ in items}):
        _ensure_partition(tx, table, namespace)
    tx.executemany(
        f"INSERT INTO {table} (rowid, namespace, embedding) VALUES (?, ?, ?) "
        "ON CONFLICT (namespace, rowid) DO UPDATE SET embedding = excluded.embedding",
        [(rowid, ns, PgVector(vector)) for rowid, ns, vector in items],
    )


def delete_vectors(tx: PgConnection, table: str, rowids: Sequence[int]) -> int:
    return tx.execute(f"DELETE FROM {table} WHERE rowid = ANY(?)", (list(rowids),)).rowcount


def knn(
    conn: PgConnection,
    table: str,
    vector: Any,
    namespaces: Sequence[str],
    k: int,
) -> list[tuple[int, float]]:
    """The ``k`` nearest (rowid, cosine similarity) across ``namespaces``, best first."""
    if k <= 0 or not namespaces:
        return []
    query = PgVector(vector)
    if conn.in_transaction:
        return _knn(conn, table, query, namespaces, k)
    # ef_search is set for this search only (SET LOCAL needs a transaction).
    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    try:
        return _knn(conn, table, query, namespaces, k)
    finally:
        conn.execute("COMMIT")


def _knn(
    conn: PgConnection, table: str, query: PgVector, namespaces: Sequence[str], k: int
) -> list[tuple[int, float]]:
    if k <= _EF_MAX:
        conn.execute("SELECT set_config('hnsw.ef_search', ?, true)", (str(max(k, 40)),))
    else:
        conn.execute("SELECT set_config('enable_indexscan', 'off', true)")
    found: list[tuple[int, float]] = []
    for namespace in sorted(set(namespaces)):
        found.extend(
            (int(r), float(s))
            for r, s in conn.execute(
                f"SELECT rowid, 1 - (embedding <=> ?) AS score FROM {table} "
                "WHERE namespace = ? ORDER BY embedding <=> ? LIMIT ?",
                (query, namespace, query, k),
            )
        )
    found.sort(key=lambda pair: (-pair[1], pair[0]))
    return found[:k]
