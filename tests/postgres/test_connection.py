"""The adapter: SQLite-shaped SQL and results on PostgreSQL, errors of the project's tree."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from aide_memoire.engine.core.errors import InvalidInput, StoreBusy, StoreConflict, StoreError
from aide_memoire.engine.storage.postgres import (
    PgConnection,
    PostgresDatabase,
    ensure_space,
    insert_vectors,
)
from aide_memoire.engine.storage.postgres.connection import translate
from aide_memoire.engine.storage.protocol import Connection

from .rows import insert_memory


@pytest.mark.parametrize(
    ("sql", "named", "expected"),
    [
        ("SELECT ? , ?", False, "SELECT %s , %s"),
        ("SELECT '?' || ?", False, "SELECT '?' || %s"),
        ("SELECT 'it''s ?', \"odd?name\" FROM t WHERE a = ?", False,
         "SELECT 'it''s ?', \"odd?name\" FROM t WHERE a = %s"),
        ("SELECT x FROM t WHERE y LIKE '10%' AND z = ?", False,
         "SELECT x FROM t WHERE y LIKE '10%%' AND z = %s"),
        ("SELECT 5 % ? -- why?\n", False, "SELECT 5 %% %s -- why?\n"),
        ("SELECT /* ? */ ?", False, "SELECT /* ? */ %s"),
        ("SELECT $f$ ? $f$, ?", False, "SELECT $f$ ? $f$, %s"),
        ("SELECT :a::text, ':b', :c_1", True, "SELECT %(a)s::text, ':b', %(c_1)s"),
    ],
)
def test_placeholders_are_rewritten_outside_text_only(sql: str, named: bool, expected: str) -> None:
    assert translate(sql, named) == expected


@pytest.fixture
def db(pg_url: str) -> Iterator[PostgresDatabase]:
    with PostgresDatabase(pg_url) as store:
        yield store


def _count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])


def test_rows_go_in_and_come_back_as_sqlite_returns_them(db: PostgresDatabase) -> None:
    with db.write() as tx:
        first = insert_memory(tx, "project:a", "first note with 100% of a ? mark")
        second = insert_memory(tx, "project:a", "second note", kind="learning")
        updated = tx.execute(
            "UPDATE memories SET importance = ? WHERE rowid = ?", (0.9, second)
        )
        assert updated.rowcount == 1
        assert updated.fetchone() is None and updated.fetchall() == []
    assert second == first + 1
    with db.read() as conn:
        row = conn.execute(
            "SELECT content, kind, importance FROM memories WHERE rowid = :r", {"r": second}
        ).fetchone()
        assert row == ("second note", "learning", 0.9)
        assert conn.execute("SELECT content FROM memories WHERE rowid = ?", (first,)).fetchone()[
            0
        ] == "first note with 100% of a ? mark"
        assert [r for (r,) in conn.execute("SELECT rowid FROM memories ORDER BY rowid")] == [
            first, second,
        ]
        assert conn.execute("SELECT 1 WHERE false").fetchone() is None


def test_executemany_writes_every_row(db: PostgresDatabase) -> None:
    with db.write() as tx:
        rowid = insert_memory(tx, "project:a", "a memory with terms")
        tx.executemany(
            "INSERT INTO memory_terms (namespace, term, memory_rowid) VALUES (?, ?, ?)",
            [("project:a", term, rowid) for term in ("alpha", "beta", "gamma")],
        )
    with db.read() as conn:
        terms = conn.execute("SELECT term FROM memory_terms ORDER BY term").fetchall()
    assert terms == [("alpha",), ("beta",), ("gamma",)]


def test_a_failed_write_leaves_nothing_and_says_why(db: PostgresDatabase) -> None:
    with db.write() as tx:
        insert_memory(tx, "project:a", "kept")
        memory_id = tx.execute("SELECT id FROM memories").fetchone()[0]
    with pytest.raises(StoreConflict, match="conflicts"), db.write() as tx:
        insert_memory(tx, "project:a", "lost with its transaction")
        tx.execute(
            "INSERT INTO memories (id, namespace, kind, content, content_hash, created_at, "
            "updated_at) VALUES (?, 'project:a', 'note', 'x', 'h', 't', 't')",
            (memory_id,),
        )
    with pytest.raises(StoreConflict), db.write() as tx:
        insert_memory(tx, "project:a", "bad kind", kind="poem")
    with pytest.raises(RuntimeError), db.write() as tx:
        insert_memory(tx, "project:a", "rolled back by the caller's error")
        raise RuntimeError("caller failed")
    with db.read() as conn:
        assert _count(conn) == 1
        assert conn.execute("SELECT count(*) FROM keyword_docs").fetchone() == (1,)


def test_a_vector_of_the_wrong_size_is_invalid_input(db: PostgresDatabase) -> None:
    with pytest.raises(InvalidInput, match="dimensions"), db.write() as tx:
        rowid = insert_memory(tx, "project:a", "vector too short")
        table = ensure_space(tx, "test_4", "test", 4, "2026-01-01")
        insert_vectors(tx, table, [(rowid, "project:a", [1.0, 0.0])])
    with db.read() as conn:
        assert _count(conn) == 0


def test_deleting_a_memory_takes_its_index_rows_and_derived_rows(db: PostgresDatabase) -> None:
    with db.write() as tx:
        rowid = insert_memory(tx, "project:a", "Alice moved to Lisbon")
        memory_id = tx.execute("SELECT id FROM memories WHERE rowid = ?", (rowid,)).fetchone()[0]
        table = ensure_space(tx, "test_2", "test", 2, "2026-01-01")
        insert_vectors(tx, table, [(rowid, "project:a", [1.0, 0.0])])
        tx.execute(
            "INSERT INTO facts (namespace, memory_id, subject, subject_text, predicate, object, "
            "object_text, valid_from, created_at) VALUES ('project:a', ?, 'alice', 'Alice', "
            "'lives_in', 'lisbon', 'Lisbon', 't', 't')",
            (memory_id,),
        )
        tx.execute(
            "INSERT INTO memory_terms (namespace, term, memory_rowid) VALUES ('project:a', "
            "'lisbon', ?)", (rowid,),
        )
    with db.write() as tx:
        tx.execute("DELETE FROM memories WHERE rowid = ?", (rowid,))
    with db.read() as conn:
        for table_name in ("keyword_docs", "keyword_postings", table, "facts", "memory_terms"):
            assert conn.execute(f"SELECT count(*) FROM {table_name}").fetchone() == (0,)


def test_a_writer_held_up_past_the_lock_timeout_gets_store_busy(pg_url: str) -> None:
    """Writers queue on the store's writer row; one kept waiting too long is told so."""
    holder = PostgresDatabase(pg_url)
    waiter = PostgresDatabase(pg_url, lock_timeout_ms=300)
    try:
        with holder.write() as tx:
            insert_memory(tx, "project:a", "written while the other waits")
            with pytest.raises(StoreBusy, match="lock timeout"), waiter.write() as other:
                insert_memory(other, "project:a", "never written")
        with waiter.write() as other:  # the row lock is free again
            insert_memory(other, "project:a", "written after the first committed")
        with waiter.read() as conn:
            assert [c for (c,) in conn.execute("SELECT content FROM memories ORDER BY rowid")] == [
                "written while the other waits", "written after the first committed",
            ]
    finally:
        holder.close()
        waiter.close()


def test_a_lost_serializable_race_is_retried_and_reported_when_retries_run_out(
    pg_url: str,
) -> None:
    """A rival commits between this transaction's read and its write: a serialization
    failure every time, until the rival stops."""
    with PostgresDatabase(pg_url) as setup, setup.write() as tx:
        tx.execute("INSERT INTO namespace_sizes VALUES ('project:a', 0, 0, 0)")
    rival_turns = [1]

    def bump(tx: PgConnection) -> int:
        (count,) = tx.execute(
            "SELECT count FROM namespace_sizes WHERE namespace = 'project:a'"
        ).fetchone()
        if rival_turns:
            rival_turns.pop()
            with rival.write("serializable") as other:
                other.execute("UPDATE namespace_sizes SET count = count + 100")
        tx.execute("UPDATE namespace_sizes SET count = ? WHERE namespace = 'project:a'",
                   (count + 1,))
        return int(count) + 1

    with PostgresDatabase(pg_url, retries=0) as once, PostgresDatabase(pg_url) as rival:
        with pytest.raises(StoreBusy, match="at the same time"):
            once.transact(bump, isolation="serializable")
        rival_turns.append(1)
        with PostgresDatabase(pg_url, retries=1) as twice:
            # Rival: 0 -> 100 (first try), 100 -> 200; the rerun reads 200 and writes 201.
            assert twice.transact(bump, isolation="serializable") == 201
        with rival.read() as conn:
            assert conn.execute("SELECT count FROM namespace_sizes").fetchone() == (201,)


def test_a_read_only_server_says_so(pg_url: str) -> None:
    database = pg_url.split("/")[3].split("?")[0]
    with PostgresDatabase(pg_url) as db, db.conn().raw.cursor() as cur:
        cur.execute(f"ALTER DATABASE {database} SET default_transaction_read_only = on")
    with PostgresDatabase(pg_url) as db:  # migrated already: opening writes nothing
        with pytest.raises(StoreError, match="read-only"), db.write() as tx:
            insert_memory(tx, "project:a", "refused by a read-only server")
        assert db.versions()["pgvector"].count(".") == 2
        assert int(db.versions()["postgresql"].split(".")[0]) >= 13
