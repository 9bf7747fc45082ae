"""Each keyword term's document count (``keyword_terms``, schema step 13) stays equal to a
count of its postings through every write, and an older store gets it backfilled.

bm25's idf reads a word's document count from that table instead of counting the word's
postings, so a count that drifts would change scores: after each kind of write (store,
conversation turns indexed with their neighbours, an edit, forget, a rewrite of a
document) the table is compared with a recount of the postings, row for row.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from aide_memoire import Memory
from aide_memoire.engine.storage.filter import RowFilter
from aide_memoire.engine.storage.postgres import PostgresDatabase, postgres_repositories, schema
from aide_memoire.engine.storage.postgres import security as pg_security
from aide_memoire.engine.storage.postgres import vectors as pg_vectors

from .conftest import open_memory
from .rows import insert_memory

RECOUNT = ("SELECT term, namespace, count(*) FROM keyword_postings "
           "GROUP BY term, namespace ORDER BY term, namespace")
COUNTED = "SELECT term, namespace, docs FROM keyword_terms ORDER BY term, namespace"
WORDS = ["garden", "deploy", "kafka", "lisbon", "retry", "cache", "meeting", "invoice",
         "running", "runs", "café", "cafe", "e-mail", "the", "and", "of"]


def _text(rng: random.Random, unique: str = "") -> str:
    return " ".join([*rng.sample(WORDS, rng.randint(2, 9)), unique]).strip()


def _in_step(memory: Memory) -> list[tuple[str, str, int]]:
    with memory.internals.db.read() as conn:
        counted = [(str(t), str(n), int(d)) for t, n, d in conn.execute(COUNTED)]
        recounted = [(str(t), str(n), int(d)) for t, n, d in conn.execute(RECOUNT)]
    assert counted == recounted
    assert all(docs > 0 for _, _, docs in counted)  # a count at zero leaves with its row
    return counted


def test_counts_follow_every_write(tmp_path: Path, pg_url: str) -> None:
    rng = random.Random(3)
    with open_memory("postgres", tmp_path / "home", pg_url, embedding_model="none",
                     extract_facts=False) as memory:
        ids = memory.store_many([{"content": _text(rng)} for _ in range(40)], namespace="p")
        memory.store_many([{"content": _text(rng)} for _ in range(15)], namespace="q")
        assert len(_in_step(memory)) > len(WORDS)
        turns = [{"speaker": rng.choice(["Ines", "Omar"]), "content": _text(rng)}
                 for _ in range(12)]
        memory.store_conversation(turns, namespace="p", session_id="s1")
        _in_step(memory)
        memory.update(ids[0], namespace="p", content="quokka " + _text(rng))
        memory.update(ids[1], namespace="p", tags=["kafka", "zebrafinch"])
        counted = _in_step(memory)
        assert ("quokka", "p", 1) in counted and ("zebrafinch", "p", 1) in counted
        only = memory.store("an ocelot visited the garden", namespace="q")
        assert ("ocelot", "q", 1) in _in_step(memory)
        assert memory.forget(only, namespace="q")
        for memory_id in ids[2:12]:
            memory.forget(memory_id, namespace="p")
        counted = _in_step(memory)
        # The forgotten memory's own word is in no count any more.
        assert not [row for row in counted if row[0] == "ocelot"]


def test_scores_read_the_counts(tmp_path: Path, pg_url: str) -> None:
    """The idf comes from the table: a wrong count moves the scores, the recount puts
    them back to the very same rows and scores."""
    rng = random.Random(5)
    with open_memory("postgres", tmp_path / "home", pg_url, embedding_model="none",
                     extract_facts=False) as memory:
        memory.store_many([{"content": _text(rng)} for _ in range(60)], namespace="p")
        keywords = postgres_repositories().keywords
        where = RowFilter(namespaces=["p"])
        queries = ['"kafka" OR "lisbon"', '"garden" OR ("the" AND "and" AND "cache")',
                   '"e-mail" OR "cafe"']

        def ranked() -> list[list[tuple[int, float]]]:
            with memory.internals.db.read() as conn:
                return [keywords.search(conn, q, where, None, [1.0] * 7) for q in queries]

        before = ranked()
        assert all(before)
        with memory.internals.db.write() as tx:
            tx.execute("UPDATE keyword_terms SET docs = docs * 3 WHERE term = 'kafka'")
        assert ranked() != before
        with memory.internals.db.write() as tx:
            tx.execute("DELETE FROM keyword_terms")
            tx.execute(f"INSERT INTO keyword_terms (term, namespace, docs) {RECOUNT}")
        assert ranked() == before


def test_step_13_backfills_the_counts_and_drops_hnsw(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store written before step 13 (its vector table with an HNSW index) gets the
    counts of what it holds, and loses the index; its k-NN stays exact."""
    for later in [v for v in schema.STEPS if v >= 13]:  # the engine as it was before 13
        monkeypatch.delitem(schema.STEPS, later)
    monkeypatch.setattr(pg_security, "_BY_NAMESPACE", tuple(
        t for t in pg_security._BY_NAMESPACE if t != "keyword_terms"))
    rng = random.Random(9)
    matrix = np.asarray([v / np.linalg.norm(v) for v in np.random.default_rng(2).normal(
        size=(30, 16))], np.float32)
    with PostgresDatabase(pg_url) as old:
        assert old.schema_version() == 12
        with old.write() as tx:
            rowids = [insert_memory(tx, "p", _text(rng)) for _ in range(30)]
            table = pg_vectors.ensure_space(tx, "test_16", "test-model", 16, "2026-01-01")
            pg_vectors.insert_vectors(tx, table, list(zip(rowids, ["p"] * 30, matrix,
                                                          strict=True)))
            # What ensure_space made before step 13.
            tx.execute(f"CREATE INDEX {table}_hnsw ON {table} USING hnsw "
                       "(embedding vector_cosine_ops)")
    monkeypatch.undo()
    with PostgresDatabase(pg_url) as db:
        assert db.applied == sorted(v for v in schema.STEPS if v >= 13)
        with db.read() as conn:
            counted = conn.execute(COUNTED).fetchall()
            assert counted and counted == conn.execute(RECOUNT).fetchall()
            assert not conn.execute(
                "SELECT indexname FROM pg_indexes WHERE indexdef ILIKE '%hnsw%'").fetchall()
            found = pg_vectors.knn(conn, table, matrix[4], ["p"], 5)
        exact = np.argsort(-(matrix @ matrix[4]), kind="stable")[:5]
        assert [r for r, _ in found] == [rowids[i] for i in exact]
        with db.write() as tx:  # and the triggers count from then on
            doc = ("wombat garden", "", "", "", "", "", "")
            postgres_repositories().keywords.add(tx, rowids[0], doc)
        with db.read() as conn:
            assert ("wombat", "p", 1) in conn.execute(COUNTED).fetchall()
            assert conn.execute(COUNTED).fetchall() == conn.execute(RECOUNT).fetchall()
