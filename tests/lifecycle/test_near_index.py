"""The near-duplicate check's hashing index: the pairs the full scan finds, at bounded cost."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from aide_memoire import Memory
from aide_memoire.engine.lifecycle import dedup, near_codes, near_index
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


def test_catching_up_a_crowded_namespace_codes_each_bucket_s_newest_rows_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows of one crowd share buckets: a caught-up bucket holds the PER_BUCKET newest of
    them, across the mirror's chunks and the rows above the mirror, and no older one."""
    monkeypatch.setattr(near_codes, "_CHUNK", 64)  # several chunks, newest first
    rng = np.random.default_rng(11)
    base = _unit(rng.standard_normal((1, 384)))
    crowd = _near(rng, np.repeat(base, 300, axis=0),
                  rng.uniform(0.995, 0.999, 300).astype(np.float32))
    rows = np.vstack([_background(rng, 200), crowd])
    order = rng.permutation(len(rows))  # the crowd spread over the rowids
    rows = rows[order]
    found = _slice(rows[:400])
    extra = (np.arange(401, len(rows) + 1, dtype=np.int64), rows[400:])
    codes = StoredCodes(KINDS)
    coded = np.vstack([found.view.vectors.rows(0, 400).astype(np.float32), rows[400:]])
    keys = (codes.hasher(384).codes(coded).astype(np.int64)
            + (np.arange(TABLES, dtype=np.int64) << near_index.BITS)[None, :])
    want: dict[int, list[int]] = {}
    for rowid, row_keys in enumerate(keys.tolist(), start=1):
        for key in row_keys:
            want.setdefault(key, []).append(rowid)
    want = {k: sorted(v)[-near_codes.PER_BUCKET:] for k, v in want.items()}
    assert max(len(v) for v in want.values()) == near_codes.PER_BUCKET  # crowded
    with _codes_store(tmp_path) as memory, memory.internals.db.write() as tx:
        slice_id = codes.catch_up(tx, "space", "ns", found, extra, len(rows) + 1)
        assert slice_id is not None
        got: dict[int, list[int]] = {}
        for key, rowid in tx.execute("SELECT code, memory_rowid FROM near_codes WHERE "
                                     "slice = ? ORDER BY code, memory_rowid", (slice_id,)):
            got.setdefault(int(key), []).append(int(rowid))
        # A crowd's query finds the newest crowd rows, as before any pruning.
        query = crowd[:1]
        newest = {int(order_rowid) for order_rowid in
                  np.flatnonzero(order >= 200)[-near_codes.PER_BUCKET:] + 1}
        assert newest <= set(codes.candidates(tx, slice_id, query)[0].tolist())
    assert got == want
    assert sum(map(len, got.values())) < TABLES * len(rows) * 0.8  # the crowd was cut


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
