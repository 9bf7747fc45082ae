"""Write transactions run in pipeline mode: statements whose results are not read go
without waiting. What a caller reads is still exact, and an error of a statement nobody
read still fails the whole write, with the project's error, keeping nothing of it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from aide_memoire.engine.core.errors import InvalidInput, StoreConflict
from aide_memoire.engine.storage.postgres import PostgresDatabase, ensure_space, insert_vectors

from .rows import insert_memory


@pytest.fixture
def db(pg_url: str) -> Iterator[PostgresDatabase]:
    with PostgresDatabase(pg_url) as store:
        yield store


def _count(db: PostgresDatabase, table: str = "memories") -> int:
    with db.read() as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_results_read_inside_a_write_are_those_of_every_statement_before(
    db: PostgresDatabase,
) -> None:
    with db.write() as tx:
        first = insert_memory(tx, "project:a", "first memory")
        second = insert_memory(tx, "project:a", "second memory")
        assert second > first  # lastrowid of each insert, in order
        # Unread statements, then a read that must see all of them.
        for n in range(5):
            tx.execute("UPDATE memories SET importance = ? WHERE rowid = ?", (n / 10, first))
        assert tx.execute("SELECT importance FROM memories WHERE rowid = ?",
                          (first,)).fetchone() == (0.4,)
        deleted = tx.execute("DELETE FROM memories WHERE rowid = ?", (second,))
        assert deleted.rowcount == 1
        none = tx.execute("UPDATE memories SET importance = 1 WHERE rowid = -1")
        assert none.rowcount == 0
        assert tx.execute("UPDATE memories SET utility = 0").fetchone() is None  # no rows
    assert _count(db) == 1


def test_an_unread_failing_statement_fails_the_write_and_keeps_nothing(
    db: PostgresDatabase,
) -> None:
    with db.write() as tx:
        rowid = insert_memory(tx, "project:a", "kept")
        memory_id = tx.execute("SELECT id FROM memories WHERE rowid = ?", (rowid,)).fetchone()[0]
    with pytest.raises(StoreConflict), db.write() as tx:
        insert_memory(tx, "project:a", "not kept: its write fails later")
        # A duplicate primary key, its result never read; then more unread statements.
        tx.execute(
            "INSERT INTO memories (id, namespace, kind, content, content_hash, created_at, "
            "updated_at, status) VALUES (?, 'project:a', 'note', 'x', 'h', 't', 't', 'active')",
            (memory_id,),
        )
        tx.execute("UPDATE memories SET importance = 0.9")
    assert _count(db) == 1 and _count(db, "keyword_docs") == 1
    with db.read() as conn:
        assert conn.execute("SELECT importance FROM memories").fetchone()[0] != 0.9
    # The connection is usable again, in and out of pipeline mode.
    with db.write() as tx:
        insert_memory(tx, "project:a", "after the failure")
    assert _count(db) == 2


def test_a_failing_read_inside_a_write_raises_there(db: PostgresDatabase) -> None:
    with pytest.raises(InvalidInput), db.write() as tx:
        insert_memory(tx, "project:a", "not kept")
        tx.execute("SELECT 1 / 0").fetchone()
    assert _count(db) == 0


def test_a_schema_script_inside_a_write_keeps_the_transaction(db: PostgresDatabase) -> None:
    """A new embedding space (CREATE TABLE ..., a script) in the middle of a write that
    wrote before it and writes after it: one transaction, committed or rolled back whole."""
    with pytest.raises(RuntimeError), db.write() as tx:
        rowid = insert_memory(tx, "project:a", "rolled back with its new space")
        table = ensure_space(tx, "test_2", "test", 2, "2026-01-01")
        insert_vectors(tx, table, [(rowid, "project:a", [1.0, 0.0])])
        raise RuntimeError("caller failed")
    assert _count(db) == 0 and _count(db, "vector_spaces") == 0
    with db.write() as tx:
        rowid = insert_memory(tx, "project:a", "kept with its new space")
        table = ensure_space(tx, "test_2", "test", 2, "2026-01-01")
        insert_vectors(tx, table, [(rowid, "project:a", [1.0, 0.0])])
    assert _count(db) == 1 and _count(db, table) == 1
