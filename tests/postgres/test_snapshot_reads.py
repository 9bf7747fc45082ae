"""A read-only snapshot on PostgreSQL reads what recall needs in few round trips
(storage/postgres/snapshot.py, row_reads.py), and answers exactly as the server does
without its memo: the same rows, usage, supersession and filter verdicts, asked in any
order and in parts; the memo ends with its transaction."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from aide_memoire import Memory
from aide_memoire.engine.storage.filter import RowFilter
from aide_memoire.engine.storage.postgres.keyword import ranked_search
from aide_memoire.engine.storage.postgres.snapshot import memo

from .conftest import open_memory

NS = "project:snap"


@pytest.fixture
def mem(pg_url: str, tmp_path: Path) -> Iterator[Memory]:
    memory = open_memory("postgres", tmp_path / "home", pg_url, embedding_model="none")
    try:
        yield memory
    finally:
        memory.close()


def _fill(mem: Memory) -> list[int]:
    """Six notes; the first superseded by the second, the third quarantined, the fourth
    with a helpful vote; their rowids and one rowid that has no row."""
    ids = mem.store_many([{"content": f"note {i}: the cache warms slowly after deploy {i}"}
                          for i in range(6)], namespace=NS)
    store, db = mem.internals.store, mem.internals.db
    with db.write() as tx:
        rowids = [store.rowid_of(tx, memory_id, NS) for memory_id in ids]
        tx.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (ids[1], ids[0]))
        tx.execute("UPDATE memories SET status = 'quarantined' WHERE id = ?", (ids[2],))
        tx.execute("INSERT INTO memory_feedback (memory_id, helpful, last_at) "
                   "VALUES (?, 3, '2026-12-02T00:00:00Z')", (ids[3],))
    found = [r for r in rowids if r is not None]
    assert len(found) == 6
    return [*found, max(found) + 1000]


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement sent through a psycopg cursor from now on, in order."""
    sent: list[str] = []
    original = psycopg.Cursor.execute

    def counted(self: psycopg.Cursor[Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(str(query))
        return original(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", counted)
    return sent


def _answers(store: Any, conn: Any, asked: list[int], where: RowFilter) -> dict[str, Any]:
    return {
        "usage": sorted(store.usage(conn, asked)),
        "passing": store.passing(conn, asked, where),
        "replacements": sorted(store.replacements(conn, asked)),
        "records": {r: rec.model_dump() for r, rec in store.records(conn, asked).items()},
        "size_hint": store.size_hint(conn),
    }


def test_snapshot_answers_as_the_server(mem: Memory) -> None:
    asked = _fill(mem)
    store, db = mem.internals.store, mem.internals.db
    where = RowFilter(namespaces=[NS])
    with db.write() as tx:  # a write transaction has no memo: every call reads the server
        assert memo(tx) is None
        expected = _answers(store, tx, asked, where)
    assert expected["replacements"] == [(asked[0], asked[1])]
    assert asked[2] not in expected["passing"] and asked[0] in expected["passing"]
    assert {u[0]: u[6] for u in expected["usage"]}[asked[3]] == 3
    assert asked[-1] not in expected["records"]
    with db.read() as conn:
        assert memo(conn) is not None
        # In parts and out of order: each later call is answered partly from the memo.
        store.passing(conn, asked[:2], where)
        store.usage(conn, asked[3:5])
        assert _answers(store, conn, asked, where) == expected
        assert _answers(store, conn, list(reversed(asked)), where) == expected
        quarantined = RowFilter(namespaces=[NS], statuses=("quarantined",))
        assert store.passing(conn, asked, quarantined) == {asked[2]}


def test_the_memo_ends_with_its_snapshot(mem: Memory) -> None:
    asked = _fill(mem)
    store, db = mem.internals.store, mem.internals.db
    with db.read() as conn:
        before = store.size_hint(conn)
        assert before == max(asked[:-1])
    assert memo(db.conn()) is None
    mem.store("one more note, written after the snapshot", namespace=NS)
    with db.read() as conn:
        assert store.size_hint(conn) > before
        assert len(store.records(conn, range(1, before + 10))) == 7


def test_a_recall_is_a_few_round_trips(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(mem)
    mem.recall("cache warms after deploy", namespace=NS)  # caches of the first recall
    sent = _counting(monkeypatch)
    hits = mem.recall("how slowly does the cache warm after a deploy?", namespace=NS)
    assert hits and all("cache" in h.content for h in hits)
    # BEGIN with the snapshot's facts, the words' counts, the search, the candidates'
    # usage and supersession (twice at most: the facts stage looks at 30 rows, the
    # lifecycle one at those that can still reach the top), their rows, COMMIT: 13
    # statements before snapshot.py.
    assert len(sent) <= 7, "\n".join(s[:90] for s in sent)


def test_the_keyword_rows_are_read_with_the_first_candidates(
        mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _fill(mem)
    store, db = mem.internals.store, mem.internals.db
    where = RowFilter(namespaces=[NS])
    with db.write() as tx:
        expected = sorted(store.usage(tx, asked[3:6]))
    with db.read() as conn:
        found = ranked_search(conn, [["warms", "deploy"]], [NS], "m.status = ANY(?)",
                              [["active"]])
        assert {r for r, _ in found} >= set(asked[3:6])
        store.passing(conn, asked[:2], where)  # the dense candidates: the keyword rows too
        sent = _counting(monkeypatch)
        assert sorted(store.usage(conn, asked[3:6])) == expected
        assert sent == []


def test_recall_caches_hold_until_any_commit(pg_url: str, mem: Memory, tmp_path: Path) -> None:
    """The write marker recall's caches are keyed by (store_state.py): the snapshot, the
    same for two snapshots with no commit between; a commit by another client moves it,
    and the running recall then ranks as that client's fresh one does."""
    _fill(mem)
    store, db = mem.internals.store, mem.internals.db
    query = "how slowly does the cache warm after a deploy?"

    def marker() -> object:
        with db.read() as conn:
            return store.write_marker(conn)

    before = [(h.id, h.score) for h in mem.recall(query, namespace=NS, pure=True)]
    first = marker()
    assert first is not None and marker() == first
    other = open_memory("postgres", tmp_path / "other", pg_url, embedding_model="none")
    try:
        other.store_many([{"content": f"the deploy {i} went out on friday"} for i in range(20)],
                         namespace=NS)
        theirs = [(h.id, h.score) for h in other.recall(query, namespace=NS, pure=True)]
    finally:
        other.close()
    assert marker() != first
    assert [(h.id, h.score) for h in mem.recall(query, namespace=NS, pure=True)] == theirs
    assert theirs != before
    with db.write() as tx:
        assert store.write_marker(tx) is None  # a write's own rows: nothing remembered
