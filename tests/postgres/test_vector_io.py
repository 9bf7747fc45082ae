"""Vectors travel to pgvector in its binary form and come back (binary for a vector
read, text otherwise) as the float32 bytes sqlite-vec returns: every value exact,
whatever its size or sign."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from aide_memoire.engine.storage.postgres import PostgresDatabase, ensure_space, insert_vectors, knn
from aide_memoire.engine.storage.postgres.connection import reads_vectors

from .rows import insert_memory


@pytest.fixture
def db(pg_url: str) -> Iterator[PostgresDatabase]:
    with PostgresDatabase(pg_url) as store:
        yield store


def test_vectors_round_trip_exactly_in_binary(db: PostgresDatabase) -> None:
    rng = np.random.default_rng(3)
    dim = 384
    vectors = [
        rng.standard_normal(dim).astype(np.float32),  # ordinary embedding values
        (rng.standard_normal(dim) * 1e-30).astype(np.float32),  # tiny
        (rng.standard_normal(dim) * 1e30).astype(np.float32),  # huge
        np.linspace(-1, 1, dim),  # float64 in: stored as float32
        np.where(np.arange(dim) % 2 == 0, -0.0, 1 / 3).astype(np.float32),  # signs, repeats
    ]
    with db.write() as tx:
        table = ensure_space(tx, "test_384", "test", dim, "2026-01-01")
        rowids = [insert_memory(tx, "project:a", f"vector {i}") for i in range(len(vectors))]
        insert_vectors(tx, table, [(r, "project:a", v) for r, v in zip(rowids, vectors,
                                                                        strict=True)])
    with db.read() as conn:
        back = dict(conn.execute(f"SELECT rowid, embedding FROM {table}").fetchall())
    for rowid, vector in zip(rowids, vectors, strict=True):
        assert back[rowid] == np.asarray(vector, dtype=np.float32).tobytes()
    # That read asked for binary results (a vector read); the text form gives the same.
    assert reads_vectors(f"SELECT rowid, embedding FROM {table}")
    text_sql = f"WITH t AS (SELECT rowid, embedding FROM {table}) SELECT * FROM t"
    assert not reads_vectors(text_sql)
    with db.read() as conn:
        assert dict(conn.execute(text_sql).fetchall()) == back


def test_a_query_vector_is_sent_in_binary_too(db: PostgresDatabase) -> None:
    rng = np.random.default_rng(5)
    vectors = [rng.standard_normal(64).astype(np.float32) for _ in range(20)]
    with db.write() as tx:
        table = ensure_space(tx, "test_64", "test", 64, "2026-01-01")
        rowids = [insert_memory(tx, "project:a", f"vector {i}") for i in range(len(vectors))]
        insert_vectors(tx, table, list(zip(rowids, ["project:a"] * 20, vectors, strict=True)))
    for rowid, vector in zip(rowids, vectors, strict=True):  # each finds itself, cosine 1
        best, score = knn(db.conn(), table, vector.astype(np.float64), ["project:a"], 3)[0]
        assert best == rowid and score == pytest.approx(1.0, abs=1e-5)


def test_replacing_a_vector_keeps_one_row_with_the_new_values(db: PostgresDatabase) -> None:
    with db.write() as tx:
        table = ensure_space(tx, "test_3", "test", 3, "2026-01-01")
        rowid = insert_memory(tx, "project:a", "a memory whose vector changes")
        insert_vectors(tx, table, [(rowid, "project:a", [1.0, 0.0, 0.0])])
        insert_vectors(tx, table, [(rowid, "project:a", [0.0, 0.5, -2.0])])
    with db.read() as conn:
        rows = conn.execute(f"SELECT embedding FROM {table}").fetchall()
    assert [r[0] for r in rows] == [np.array([0.0, 0.5, -2.0], dtype=np.float32).tobytes()]
