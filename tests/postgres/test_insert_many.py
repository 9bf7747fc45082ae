"""``PostgresMemoryRows.insert_many`` (the bulk load's path) leaves the store as the
same rows inserted one by one leave it: the rows, their keyword documents, postings,
each term's document count and the index's totals, so scores cannot tell the two apart.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

from aide_memoire.engine.storage.filter import RowFilter
from aide_memoire.engine.storage.postgres import PostgresDatabase, postgres_repositories
from aide_memoire.engine.storage.postgres.memories import PostgresMemoryRows
from aide_memoire.engine.storage.rows import COLUMNS, NewRow

from .conftest import PgServer, new_database

WORDS = ["garden", "deploy", "kafka", "lisbon", "retry", "cache", "meeting", "invoice",
         "running", "runs", "café", "cafe", "e-mail", "the", "and", "of", "\"quoted\"",
         "back\\slash", "{brace}"]
TABLES = {
    "memories": f"SELECT rowid, {', '.join(COLUMNS)} FROM memories ORDER BY rowid",
    "docs": "SELECT rowid, namespace, length FROM keyword_docs ORDER BY rowid",
    "postings": "SELECT term, namespace, rowid, freqs, places FROM keyword_postings "
                "ORDER BY term, namespace, rowid",
    "terms": "SELECT term, namespace, docs FROM keyword_terms ORDER BY term, namespace",
    "totals": "SELECT sum(docs), sum(tokens) FROM keyword_totals",
}


def _rows(seed: int) -> list[NewRow]:
    rng = random.Random(seed)
    rows = []
    for n in range(120):
        text = " ".join(rng.choices(WORDS, k=rng.randint(1, 12)))
        namespace = rng.choice(["p", "q:x", "back\\slash\tand tab"])  # COPY escapes them
        rows.append(NewRow(id=f"m{n:04d}", namespace=namespace, kind="note",
                           content=text or "empty", tags=rng.sample(WORDS, rng.randint(0, 3)),
                           metadata={"n": n, "note": "a \"quoted\" value"} if n % 3 else {}))
    return rows


def _tables(url: str) -> dict[str, list[tuple[object, ...]]]:
    with PostgresDatabase(url) as db, db.read() as conn:
        return {name: [tuple(r) for r in conn.execute(sql).fetchall()]
                for name, sql in TABLES.items()}


def test_insert_many_writes_what_insert_writes(pg_server: PgServer) -> None:
    rows = _rows(4)
    at = datetime(2026, 12, 2, 7, 0, tzinfo=UTC)
    store = PostgresMemoryRows()
    with new_database(pg_server) as one_by_one, new_database(pg_server) as batched:
        with PostgresDatabase(one_by_one) as db, db.write() as tx:
            singles = [store.insert(tx, row, at=at) for row in rows]
        with PostgresDatabase(batched) as db, db.write() as tx:
            # Two statements' worth of postings: the chunks must add up too.
            many = store.insert_many(tx, rows[:70], at=at) + store.insert_many(
                tx, rows[70:], at=at)
        assert [i for _, i in many] == [i for _, i in singles]
        expected, got = _tables(one_by_one), _tables(batched)
        assert expected["postings"] and expected["terms"]
        for name in TABLES:
            assert got[name] == expected[name], name
        with PostgresDatabase(batched) as db, db.read() as conn:
            found = postgres_repositories().keywords.search(
                conn, '"kafka" OR "cafe"', RowFilter(namespaces=["p"]), None, [1.0] * 7)
        with PostgresDatabase(one_by_one) as db, db.read() as conn:
            assert found == postgres_repositories().keywords.search(
                conn, '"kafka" OR "cafe"', RowFilter(namespaces=["p"]), None, [1.0] * 7)
        assert found


def test_insert_many_of_nothing(pg_url: str) -> None:
    with PostgresDatabase(pg_url) as db, db.write() as tx:
        assert PostgresMemoryRows().insert_many(tx, []) == []
