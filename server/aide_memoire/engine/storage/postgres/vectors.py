"""Dense vectors on pgvector: one table per embedding space, one partition per namespace.

As in SQLite (engine/storage/vectors.py), each embedding space (model + dimension) has its own
table, registered in ``vector_spaces``, and recall only compares vectors of one space.
The table is partitioned by namespace (LIST): a search in a namespace reads that
namespace's partition only, so a small namespace beside a large one is neither slowed
nor starved of results. Vectors follow their memory on delete (cascade).

No ANN index (schema step 13 dropped the HNSW indexes of earlier stores): recall scores
the in-process mirror, exactly, and never read one, while each written vector paid ~5.5
ms for it (docs/postgres.md, "HNSW"). :func:`knn` is exact: a scan of the partitions.
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
_DIM_MAX = 16000  # pgvector's limit for vector(n)


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
        raise InvalidInput(f"a pgvector vector holds 1 to {_DIM_MAX} dimensions, not {dim}")
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
        f"CREATE INDEX {table}_rowid ON {table} (rowid);"
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
    """The ``k`` nearest (rowid, cosine similarity) across ``namespaces``, best first:
    exact, each namespace's partition scanned."""
    if k <= 0 or not namespaces:
        return []
    query = PgVector(vector)
    found: list[tuple[int, float]] = []
    for namespace in sorted(set(namespaces)):
        found.extend(
            (int(r), float(s))
            for r, s in conn.execute(
                f"SELECT rowid, 1 - (embedding <=> ?) AS score FROM {table} "
                "WHERE namespace = ? ORDER BY embedding <=> ?, rowid LIMIT ?",
                (query, namespace, query, k),
            )
        )
    found.sort(key=lambda pair: (-pair[1], pair[0]))
    return found[:k]
