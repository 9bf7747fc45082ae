"""The near-duplicate check's hashing index: the pairs the full scan finds, at bounded cost."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from aide_memoire import Memory
from aide_memoire.engine.lifecycle import near_index
from aide_memoire.engine.lifecycle.near_index import NearIndex, SliceIndexes
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


def test_the_index_gives_the_pairs_and_scores_of_the_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(near_index, "INDEX_FROM", 1_000)
    rng = np.random.default_rng(7)
    rows = _background(rng, 3_000)
    kinds = [("turn" if i % 5 == 0 else "note") for i in range(len(rows))]
    found = _slice(rows, kinds)
    picked = rng.choice(len(rows), 80, replace=False)
    queries = np.vstack([_near(rng, rows[picked], rng.uniform(0.9, 1.0, 80).astype(np.float32)),
                         _background(rng, 20)])
    indexes = SliceIndexes(KINDS)
    below = 2_500  # rows at or above it are the batch's own: never candidates
    got = indexes.similar(("space", "ns"), found, queries, THRESHOLD, below)
    assert indexes._entries[("space", "ns")].near is not None  # the index answered
    want = found.similar(queries, THRESHOLD, below, KINDS)
    assert {(j, r) for j, r, _ in got} == {(j, r) for j, r, _ in want}
    assert len(want) > 40
    scores = {(j, r): s for j, r, s in want}
    assert all(abs(s - scores[(j, r)]) < 1e-5 for j, r, s in got)

    # Rows appended to the slice afterwards are indexed on the next check.
    more = _near(rng, rows[:10], np.full(10, 0.97, np.float32))
    found.append([(len(rows) + 1 + i, v.tobytes(), None, None, "note")
                  for i, v in enumerate(more)], None)
    got = indexes.similar(("space", "ns"), found, more, THRESHOLD, 10**9)
    want = found.similar(more, THRESHOLD, 10**9, KINDS)
    assert {(j, r) for j, r, _ in got} == {(j, r) for j, r, _ in want}
    assert all(any(r == len(rows) + 1 + j for jj, r, _ in got if jj == j) for j in range(10))


def test_a_dense_namespace_and_a_small_one_are_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(near_index, "INDEX_FROM", 1_000)
    rng = np.random.default_rng(3)
    centre = _unit(rng.standard_normal((1, 384)))
    dense = _near(rng, np.repeat(centre, 2_000, axis=0), np.full(2_000, 0.9, np.float32))
    indexes = SliceIndexes(KINDS)
    found = _slice(dense)
    queries = dense[:5]
    got = indexes.similar(("s", "dense"), found, queries, THRESHOLD, 10**9)
    want = found.similar(queries, THRESHOLD, 10**9, KINDS)
    assert sorted(got) == sorted(want)
    small = _slice(dense[:500])
    assert sorted(indexes.similar(("s", "small"), small, queries, THRESHOLD, 10**9)) == sorted(
        small.similar(queries, THRESHOLD, 10**9, KINDS))
    assert indexes._entries[("s", "small")].near is None


def test_a_near_duplicate_is_linked_through_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(near_index, "INDEX_FROM", 20)
    monkeypatch.setattr(near_index, "DENSE_SHARE", 1)  # 21 rows: never fall back to the scan
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
        dedup = dict(memory.internals.context.pipeline.after_write)["near_duplicates"]
        assert any(e.near is not None for e in dedup.indexes._entries.values())  # type: ignore[attr-defined]
        assert [(lk["kind"], lk["target"]) for lk in memory.links(again)] == [
            ("near_duplicate", first)]
