"""Renaming a namespace in every table, on PostgreSQL (SQLite's: storage/sqlite/namespaces.py).

The tables come from the catalogue (every table of the store's schema with a
``namespace`` column), so a table a later migration adds moves too. SQLite's
``UPDATE OR IGNORE`` (skip a row whose new key is taken; the caller then deletes what
is left) is written out from each table's unique indexes that hold ``namespace``: a row
moves unless the new namespace has a row with the same other key columns. Vectors are
partitioned by namespace: they move through vectors.py, which makes the new
namespace's partition. Not moved, on purpose: ``namespace_roles`` (who may see a
namespace is the store owner's decision, not a side effect of adopting it).
"""

from __future__ import annotations

import numpy as np

from ...core.errors import StoreError
from ..portable.namespaces import finish_move, merge_entities
from ..protocol import Connection
from . import vectors as pgvectors
from .connection import PgConnection

__all__ = ["move_namespace"]

# History, not state (audit_events); merged (entities); moved last (memories); summed
# (namespace_sizes); access control (namespace_roles).
_SKIP = {"audit_events", "entities", "memories", "namespace_sizes", "namespace_roles"}


def _tables(tx: Connection) -> list[str]:
    """Plain tables of the schema with a ``namespace`` column, vector spaces left out."""
    spaces = {str(t) for (t,) in tx.execute("SELECT table_name FROM vector_spaces")}
    rows = tx.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
        "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' "
        "AND NOT c.relispartition AND a.attname = 'namespace' AND NOT a.attisdropped "
        "ORDER BY c.relname"
    ).fetchall()
    return [str(r) for (r,) in rows if str(r) not in _SKIP and str(r) not in spaces]


def _unique_keys(tx: Connection, table: str) -> list[list[str]]:
    """Column lists of the table's unique indexes that hold ``namespace``."""
    keys: list[list[str]] = []
    for (columns,) in tx.execute(
        "SELECT array(SELECT a.attname FROM unnest(i.indkey) AS k(n) JOIN pg_attribute a "
        "ON a.attrelid = i.indrelid AND a.attnum = k.n) FROM pg_index i "
        "WHERE i.indrelid = (current_schema() || '.' || ?)::regclass AND i.indisunique",
        (table,),
    ):
        names = [str(c) for c in columns]
        if "namespace" in names:
            keys.append(names)
    return keys


def _move_rows(tx: Connection, table: str, old: str, new: str) -> None:
    taken = [
        f"NOT EXISTS (SELECT 1 FROM {table} o WHERE o.namespace = ?"
        + "".join(f" AND o.{c} = {table}.{c}" for c in key if c != "namespace") + ")"
        for key in _unique_keys(tx, table)
    ]
    tx.execute(
        f"UPDATE {table} SET namespace = ? WHERE namespace = ?"
        + "".join(f" AND {clause}" for clause in taken),
        (new, old, *([new] * len(taken))),
    )
    tx.execute(f"DELETE FROM {table} WHERE namespace = ?", (old,))


def _move_vectors(tx: PgConnection, old: str, new: str) -> None:
    for (table,) in tx.execute("SELECT table_name FROM vector_spaces").fetchall():
        rows = tx.execute(
            f"SELECT rowid, embedding FROM {table} WHERE namespace = ?", (old,)
        ).fetchall()
        if not rows:
            continue
        pgvectors.delete_vectors(tx, str(table), [int(r) for r, _ in rows])
        pgvectors.insert_vectors(tx, str(table), [
            (int(r), new, np.frombuffer(blob, dtype=np.float32).tolist()) for r, blob in rows])
    # The in-process vector caches follow vector_state's epoch: make every one reload.
    tx.execute("UPDATE vector_state SET epoch = epoch + 1 WHERE namespace IN (?, ?)", (old, new))


def move_namespace(tx: Connection, old: str, new: str, *, vectors: bool = True) -> int:
    """Move every row of ``old`` into ``new`` in the caller's transaction (entities both
    know become one); returns the memories moved. ``vectors`` is accepted for SQLite's
    signature: pgvector is always there."""
    if not isinstance(tx, PgConnection):  # vectors.py quotes with the driver's connection
        raise StoreError("the PostgreSQL adoption was handed a connection of another store")
    moved = int(tx.execute(
        "SELECT count(*) FROM memories WHERE namespace = ?", (old,)).fetchone()[0])
    if not moved:
        return 0
    _move_vectors(tx, old, new)
    merge_entities(tx, old, new)
    for table in _tables(tx):
        _move_rows(tx, table, old, new)
    finish_move(tx, old, new)
    return moved
