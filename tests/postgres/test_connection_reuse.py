"""Connections outlive no thread: a server's pooled worker threads come and go (the
daemon runs requests on them), and a thread that ended hands its idle connection to the
next new thread instead of leaving it open on the server."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import psycopg
import pytest

from aide_memoire.engine.storage.postgres import PostgresDatabase

from .rows import insert_memory


@pytest.fixture
def db(pg_url: str) -> Iterator[PostgresDatabase]:
    with PostgresDatabase(pg_url) as store:
        yield store


def _server_connections(url: str) -> int:
    with psycopg.connect(url) as conn:
        found = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'aide-memoire' "
            "AND datname = current_database()"
        ).fetchone()
    return int(found[0]) if found else 0


def _in_thread(work: Callable[[], object]) -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


def test_threads_that_come_and_go_reuse_one_connection(db: PostgresDatabase,
                                                       pg_url: str) -> None:
    seen: list[int] = []

    def write_and_read() -> None:
        with db.write() as tx:
            insert_memory(tx, "project:a", f"from worker {len(seen)}")
        seen.append(id(db.conn()))

    for _ in range(12):
        _in_thread(write_and_read)
    assert len(set(seen)) == 1  # every new worker took the ended worker's connection
    assert _server_connections(pg_url) == 2  # that one and the opening thread's
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (12,)


def test_threads_alive_at_once_have_a_connection_each(db: PostgresDatabase) -> None:
    barrier = threading.Barrier(3)
    seen: list[int] = []

    def hold() -> None:
        seen.append(id(db.conn()))
        barrier.wait(timeout=30)

    threads = [threading.Thread(target=hold) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(seen)) == 3


def test_a_connection_left_in_a_transaction_is_closed_not_reused(
    db: PostgresDatabase, pg_url: str
) -> None:
    # The objects themselves are kept (not their id()s: a closed connection's object can
    # be collected and its address given to the next one, which CI once saw).
    abandoned: list[object] = []

    def leave_open() -> None:
        conn = db.conn()
        conn.execute("BEGIN")
        insert_memory(conn, "project:a", "never committed")
        abandoned.append(conn)

    _in_thread(leave_open)
    reused: list[object] = []
    _in_thread(lambda: reused.append(db.conn()))
    assert reused[0] is not abandoned[0]
    assert _server_connections(pg_url) == 2
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)
