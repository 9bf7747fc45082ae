"""The near-duplicate check's hashing index: the pairs the full scan finds, at bounded cost."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from aide_memoire import Memory
from aide_memoire.engine.lifecycle import dedup, near_index
from aide_memoire.engine.lifecycle.near_codes import StoredCodes
from aide_memoire.engine.lifecycle.near_index import TABLES, NearIndex
from aide_memoire.engine.recall.mirror import _Slice

from .conftest import settings

KINDS = ("note", "learning", "fact", "summary")
THRESHOLD = 0.92


def _unit(rows: np.ndarray) -> np.ndarray:
    out: np.ndarray = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return out


def _near(rng: np.random.Generator, rows: np.ndarray, cosines: np.ndarray) -> np.ndarray:
    """One vector at each given cosine to each row, in a random direction."""
    noise = rng.standard_normal(rows.shape).astype(np.float32)
    noise -= (noise * rows).sum(axis=1, keepdims=True) * rows
    noise = _unit(noise)
    return _unit(rows * cosines[:, None] + noise * np.sqrt(1 - cosines**2)[:, None])


def _background(rng: np.random.Generator, n: int) -> np.ndarray:
    """Sentence-like vectors: mixtures of a few hundred topics, so rows share structure
    (cosines well above a random pair's) as texts of one namespace do."""
    topics = _unit(rng.standard_normal((300, 384)))
    weights = rng.exponential(size=(n, 3)).astype(np.float32)
    picks = rng.integers(0, len(topics), size=(n, 3))
    mixed = (topics[picks] * weights[..., None]).sum(axis=1)
    return _unit(mixed + 0.6 * rng.standard_normal((n, 384)).astype(np.float32) / 19.6)


def _slice(vectors: np.ndarray, kinds: list[str] | None = None) -> _Slice:
    found = _Slice(vectors.shape[1])
    kinds = kinds or ["note"] * len(vectors)
    found.append([(i + 1, v.tobytes(), None, None, k)
                  for i, (v, k) in enumerate(zip(vectors, kinds, strict=True))], None)
    return found


@pytest.mark.parametrize("band", [(0.92, 0.94), (0.94, 0.97), (0.97, 1.0)])
def test_rows_at_or_above_the_threshold_are_candidates(band: tuple[float, float]) -> None:
    rng = np.random.default_rng(int(band[0] * 100))
    rows = _background(rng, 20_000)
    index = NearIndex(384)
    index.add(np.arange(len(rows)), rows)
    picked = rng.choice(len(rows), 300, replace=False)
    queries = _near(rng, rows[picked], rng.uniform(*band, size=300).astype(np.float32))
    found = index.candidates(queries)
    assert all(int(p) in set(c.tolist()) for p, c in zip(picked, found, strict=True))
    # And far fewer than every row: the point of the index.
    assert np.median([len(c) for c in found]) < len(rows) / 50


def _coded(memory: Memory) -> int:
    with memory.internals.db.read() as conn:
        return int(conn.execute("SELECT count(DISTINCT memory_rowid) FROM near_codes"
                                ).fetchone()[0])


def _codes_store(tmp_path: Path) -> Memory:
    return Memory(settings=settings(tmp_path))


def test_the_stored_codes_give_the_pairs_and_scores_of_the_scan(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    rows = _background(rng, 3_000)
    kinds = [("turn" if i % 5 == 0 else "note") for i in range(len(rows))]
    found = _slice(rows, kinds)
    picked = rng.choice(len(rows), 80, replace=False)
    queries = np.vstack([_near(rng, rows[picked], rng.uniform(0.9, 1.0, 80).astype(np.float32)),
                         _background(rng, 20)])
    codes = StoredCodes(KINDS)
    below = 2_500  # rows at or above it are the batch's own: never candidates
    with _codes_store(tmp_path) as memory, memory.internals.db.write() as tx:
        slice_id = codes.catch_up(tx, "space", "ns", found, None, below)
        assert slice_id is not None
        stored = tx.execute("SELECT count(*), count(DISTINCT memory_rowid) FROM near_codes "
                            "WHERE slice = ?", (slice_id,)).fetchone()
        assert tuple(stored) == (TABLES * kinds.count("note"), kinds.count("note"))
        # Caught up: a second call codes nothing more.
        assert codes.catch_up(tx, "space", "ns", found, None, below) == slice_id
        assert tx.execute("SELECT count(*) FROM near_codes").fetchone()[0] == stored[0]
        got = []
        rowids = found.view.rowids[: found.view.size]
        for j, rowid_set in enumerate(codes.candidates(tx, slice_id, queries)):
            at = np.searchsorted(rowids, rowid_set[rowid_set < below])
            scores = found.scores_at(at, queries[j])
            got += [(j, int(rowids[at[h]])) for h in np.flatnonzero(scores >= THRESHOLD)]
    want = found.similar(queries, THRESHOLD, below, KINDS)
    assert set(got) == {(j, r) for j, r, _ in want}
    assert len(want) > 40


def test_a_near_duplicate_is_found_by_a_new_process_from_the_codes_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(near_index, "INDEX_FROM", 20)
    monkeypatch.setattr(dedup, "INDEX_FROM", 20)
    ns = "project:codes"
    with Memory(settings=settings(tmp_path)) as memory:
        first = memory.store("The staging cluster is rebuilt from scratch every Sunday.",
                             namespace=ns)
        memory.store_many([{"content": f"Team {w} reviews its alerts on {d}."}
                           for w, d in zip(["red", "blue", "green", "grey", "gold", "teal",
                                            "navy", "pink", "lime", "rust", "sand", "plum",
                                            "jade", "ruby", "onyx", "opal", "mint", "sage",
                                            "iris", "coal"],
                                           ["Monday", "Tuesday"] * 10, strict=True)],
                          namespace=ns)
        assert _coded(memory) == 21
    with Memory(settings=settings(tmp_path)) as fresh:
        again = fresh.store("The staging cluster is rebuilt from scratch each Sunday.",
                            namespace=ns)
        assert [(lk["kind"], lk["target"]) for lk in fresh.links(again)] == [
            ("near_duplicate", first)]
        assert _coded(fresh) == 22
        fresh.forget(first, namespace=ns)
        assert _coded(fresh) == 21


def test_a_near_duplicate_is_linked_through_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dedup, "INDEX_FROM", 20)
    ns = "project:big"
    with Memory(settings=settings(tmp_path)) as memory:
        first = memory.store("Backups of the main database run every night at 2am.",
                             namespace=ns)
        memory.store_many([{"content": f"Service {n} owns the {w} queue and pages on-call."}
                           for n, w in enumerate(["billing", "search", "mail", "auth", "sync",
                                                  "media", "export", "import", "audit", "cron",
                                                  "chat", "feed", "maps", "pay", "quota",
                                                  "rank", "tags", "user", "wiki", "zip"])],
                          namespace=ns)
        memory.recall("database backups", namespace=ns)  # the mirror holds the namespace
        again = memory.store("Backups of the main database run every night at 2 am.",
                             namespace=ns)
        assert "near_duplicates" in dict(memory.internals.context.pipeline.after_write)
        with memory.internals.db.read() as conn:
            coded_to = conn.execute("SELECT coded_to FROM near_code_slices WHERE namespace = ?",
                                    (ns,)).fetchone()[0]
        assert coded_to >= 22  # the codes answered
        assert [(lk["kind"], lk["target"]) for lk in memory.links(again)] == [
            ("near_duplicate", first)]
