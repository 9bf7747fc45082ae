"""Keyword search (FTS5's bm25 on PostgreSQL) and dense k-NN (pgvector, exact) on real data.

Corpora are generated: made-up words from a seeded generator, so no test is written
around a word the ranking happens to like.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest

from aide_memoire.engine.storage.postgres import (
    PostgresDatabase,
    ensure_space,
    insert_vectors,
    keyword_search,
    knn,
)
from aide_memoire.engine.storage.postgres.vectors import partition_name

from .conftest import PgServer, new_database
from .rows import insert_memory


def _words(rng: random.Random, count: int) -> list[str]:
    """Pronounceable made-up words (consonant-vowel pairs): no English stem collides."""
    out: set[str] = set()
    while len(out) < count:
        out.add("".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(4)))
    return sorted(out)


@pytest.fixture
def db(pg_url: str) -> Iterator[PostgresDatabase]:
    with PostgresDatabase(pg_url) as store:
        yield store


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_rare_word_outranks_a_common_one_and_every_match_is_found(
    db: PostgresDatabase, seed: int
) -> None:
    rng = random.Random(seed)
    vocabulary = _words(rng, 60)
    common, rare, filler = vocabulary[0], vocabulary[1], vocabulary[2:]
    with db.write() as tx:
        holders = {
            insert_memory(tx, "project:a", " ".join([common, *rng.sample(filler, 8)]))
            for _ in range(150)
        }
        plain = [insert_memory(tx, "project:a", " ".join(rng.sample(filler, 9))) for _ in range(50)]
        target = insert_memory(tx, "project:a", " ".join([rare, *rng.sample(filler, 8)]))
    with db.read() as conn:
        hits = keyword_search(conn, [common, rare], ["project:a"])
    assert hits[0][0] == target
    assert {rowid for rowid, _ in hits} == holders | {target}
    assert not set(plain) & {rowid for rowid, _ in hits}
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True)


def test_the_turn_itself_outweighs_its_neighbours(db: PostgresDatabase) -> None:
    rng = random.Random(7)
    word, *filler = _words(rng, 30)
    others = " ".join(rng.sample(filler, 6))
    with db.write() as tx:
        in_window = insert_memory(tx, "project:a", others, doc=(others, "", "", "", word, "", ""))
        in_after = insert_memory(tx, "project:a", others, doc=(others, "", "", word, "", "", ""))
        in_context = insert_memory(tx, "project:a", others, doc=(others, "", word, "", "", "", ""))
        in_content = insert_memory(tx, "project:a", f"{others} {word}")
    with db.read() as conn:
        ranked = [rowid for rowid, _ in keyword_search(conn, [word], ["project:a"])]
    # fusion.KEYWORD_WEIGHTS: content 1.0 > context 0.5 > window 0.3 > after 0.25.
    assert ranked == [in_content, in_context, in_window, in_after]


def test_stems_and_diacritics_match_as_in_sqlite(db: PostgresDatabase) -> None:
    with db.write() as tx:
        running = insert_memory(tx, "project:a", "She was running the migrations")
        cafe = insert_memory(tx, "project:a", "Meet at the Café Crème on Tuesday")
    with db.read() as conn:
        assert [r for r, _ in keyword_search(conn, ["runs"], ["project:a"])] == [running]
        assert [r for r, _ in keyword_search(conn, ["cafe", "creme"], ["project:a"])] == [cafe]
        assert [r for r, _ in keyword_search(conn, ["crème"], ["project:a"])] == [cafe]
        # Query syntax is text: operators and quotes find nothing rather than fail.
        assert keyword_search(conn, ["!&|(", "'\""], ["project:a"]) == []


def test_search_keeps_to_its_namespaces_statuses_and_limit(db: PostgresDatabase) -> None:
    with db.write() as tx:
        mine = [insert_memory(tx, "project:a", f"deploy step {i}") for i in range(30)]
        theirs = insert_memory(tx, "project:b", "deploy step elsewhere")
        held = insert_memory(tx, "project:a", "deploy held for review", status="quarantined")
    with db.read() as conn:
        found = keyword_search(conn, ["deploy"], ["project:a"])
        assert {r for r, _ in found} == set(mine)
        assert len(keyword_search(conn, ["deploy"], ["project:a"], limit=5)) == 5
        both = keyword_search(conn, ["deploy"], ["project:a", "project:b"])
        assert {r for r, _ in both} == {*mine, theirs}
        reviewed = keyword_search(conn, ["deploy"], ["project:a"], statuses=["quarantined"])
        assert [r for r, _ in reviewed] == [held]


def _unit(rows: np.ndarray) -> np.ndarray:
    return np.asarray(rows / np.linalg.norm(rows, axis=1, keepdims=True), dtype=np.float64)


@dataclass(frozen=True)
class Vectors:
    db: PostgresDatabase
    table: str
    stored: dict[str, tuple[list[int], np.ndarray]]


@pytest.fixture(scope="module")
def vectors(pg_server: PgServer) -> Iterator[Vectors]:
    """1,800 random unit vectors in two namespaces, built once: the tests only read."""
    rng = np.random.default_rng(11)
    stored: dict[str, tuple[list[int], np.ndarray]] = {}
    with new_database(pg_server) as url, PostgresDatabase(url) as db:
        with db.write() as tx:
            table = ensure_space(tx, "test_32", "test-model", 32, "2026-01-01")
            for namespace, count in (("project:big", 1500), ("project:small", 300)):
                matrix = _unit(rng.normal(size=(count, 32)))
                rowids = [insert_memory(tx, namespace, f"vector {i}") for i in range(count)]
                insert_vectors(tx, table, list(zip(rowids, [namespace] * count,
                                                   matrix.tolist(), strict=True)))
                stored[namespace] = (rowids, matrix)
        yield Vectors(db, table, stored)


def _exact(rowids: list[int], matrix: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    order = np.argsort(-(matrix @ query), kind="stable")[:k]
    return [rowids[i] for i in order]


def test_knn_returns_the_exact_neighbours(vectors: Vectors) -> None:
    db, table, stored = vectors.db, vectors.table, vectors.stored
    rowids, matrix = stored["project:big"]
    rng = np.random.default_rng(5)
    with db.read() as conn:
        for i in rng.choice(len(rowids), size=20, replace=False):
            query = _unit((matrix[i] + rng.normal(scale=0.05, size=32))[None, :])[0]
            hits = knn(conn, table, query.tolist(), ["project:big"], 10)
            assert hits[0][0] == rowids[i]
            assert hits[0][1] == pytest.approx(float(matrix[i] @ query), abs=1e-5)
            # No ANN index (schema step 13): the neighbours are the exact ones, in order.
            assert [r for r, _ in hits] == _exact(rowids, matrix, query, 10)


def test_knn_of_any_k_is_exact(vectors: Vectors) -> None:
    db, table, stored = vectors.db, vectors.table, vectors.stored
    rowids, matrix = stored["project:big"]
    query = matrix[0]
    for k in (100, 1200):
        found = knn(db.conn(), table, query.tolist(), ["project:big"], k)
        assert [r for r, _ in found] == _exact(rowids, matrix, query, k)


def test_knn_reads_each_namespace_in_its_own_partition(vectors: Vectors) -> None:
    db, table, stored = vectors.db, vectors.table, vectors.stored
    small, small_matrix = stored["project:small"]
    query = small_matrix[3]
    with db.read() as conn:
        hits = knn(conn, table, query.tolist(), ["project:small"], 50)
        assert {r for r, _ in hits} <= set(small) and hits[0][0] == small[3]
        plan = "\n".join(
            str(line)
            for (line,) in conn.execute(
                f"EXPLAIN SELECT rowid FROM {table} WHERE namespace = ? "
                "ORDER BY embedding <=> ?::vector LIMIT 5",
                ("project:small", str(query.tolist())),
            )
        )
        indexes = [str(d) for (d,) in conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename LIKE ?", (f"{table}%",))]
    assert partition_name(table, "project:small") in plan
    assert partition_name(table, "project:big") not in plan
    assert indexes and not [d for d in indexes if "hnsw" in d.lower()]
    both = knn(db.conn(), table, query.tolist(), ["project:small", "project:big"], 20)
    assert both[0][0] == small[3] and len(both) == 20
