"""The vec0 write: a batch's new rows are added, a row written again has its vector
replaced (one row, the new vector, the namespace's epoch moved), whatever the batch's size."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from aide_memoire.engine.core.space import EmbeddingSpace
from aide_memoire.engine.storage.db import SqliteDatabase
from aide_memoire.engine.storage.rows import NewRow
from aide_memoire.engine.storage.sqlite import sqlite_repositories
from aide_memoire.engine.storage.sqlite.vectors import SqliteVectorIndex

SPACE = EmbeddingSpace(model="test-model", dim=8)


def _vector(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(SPACE.dim).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[SqliteDatabase, SqliteVectorIndex, list[int]]]:
    """A real store with 1,200 notes (no vectors yet) and its vector index."""
    db = SqliteDatabase(tmp_path / "memory.db")
    try:
        vectors = SqliteVectorIndex(vec_available=db.vec_version is not None)
        repos = sqlite_repositories(vectors)
        with db.write() as tx:
            rowids = [repos.rows.insert(tx, NewRow(namespace="n", kind="note",
                                                   content=f"note number {i}"))[0]
                      for i in range(1200)]
        yield db, vectors, rowids
    finally:
        db.close()


def test_new_rows_are_added_and_a_rewritten_row_is_replaced(
        store: tuple[SqliteDatabase, SqliteVectorIndex, list[int]]) -> None:
    db, vectors, rowids = store
    # More rows than one SQL statement may bind.
    with db.write() as tx:
        vectors.insert(tx, SPACE, [(r, "n", _vector(r)) for r in rowids[:1000]], "t0")
    with db.read() as conn:
        table = vectors.table_of(conn, SPACE)
        assert table
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 1000
        appended = vectors.mirror_state(conn, SPACE.key, "n")
    assert appended is not None and appended[0] == rowids[999]

    # A batch of new rows only: the epoch stays (the mirror appends).
    with db.write() as tx:
        vectors.insert(tx, SPACE, [(r, "n", _vector(r)) for r in rowids[1000:1100]], "t1")
    with db.read() as conn:
        state = vectors.mirror_state(conn, SPACE.key, "n")
    assert state == (rowids[1099], appended[1])

    # One row written again beside new ones: replaced, not doubled; the epoch moves.
    again = rowids[17]
    with db.write() as tx:
        vectors.insert(tx, SPACE, [(again, "n", _vector(10**6)),
                                   *[(r, "n", _vector(r)) for r in rowids[1100:]]], "t2")
    with db.read() as conn:
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 1200
        assert conn.execute(f"SELECT count(*) FROM {table} WHERE rowid = ?",
                            (again,)).fetchone()[0] == 1
        blob = conn.execute(f"SELECT embedding FROM {table} WHERE rowid = ?",
                            (again,)).fetchone()[0]
        final = vectors.mirror_state(conn, SPACE.key, "n")
    assert np.allclose(np.frombuffer(blob, np.float32), _vector(10**6))
    assert final is not None and final[0] == rowids[-1] and final[1] > state[1]


def test_raw_vectors_returns_the_stored_vectors_of_the_rows_that_have_one(
        store: tuple[SqliteDatabase, SqliteVectorIndex, list[int]]) -> None:
    db, vectors, rowids = store
    with db.write() as tx:
        vectors.insert(tx, SPACE, [(r, "n", _vector(r)) for r in rowids[:4]], "t0")
    with db.read() as conn:
        table = vectors.table_of(conn, SPACE)
        assert table
        got = vectors.raw_vectors(conn, table, [rowids[3], rowids[4], rowids[0]])
    assert sorted(got) == sorted([rowids[3], rowids[0]])  # rowids[4] has no vector
    for r, v in got.items():
        assert np.allclose(v, _vector(r))
