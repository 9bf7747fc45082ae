"""The PostgreSQL keyword index ranks and scores exactly as SQLite's FTS5 bm25.

The same rows are written to both backends through their repositories (the write path's
own keyword documents: content, speaker, neighbours, tags, dates), then the same FTS5
queries, of every class recall and forget write, are run on both. The corpus is drawn
by a seeded generator from word classes (inflected forms, diacritics, words FTS5 splits,
other scripts, numbers, names), not from the queries' words.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from aide_memoire.engine.core.text import fts_query
from aide_memoire.engine.recall.fusion import KEYWORD_WEIGHTS
from aide_memoire.engine.storage.filter import RowFilter
from aide_memoire.engine.storage.migrations import FTS_COLUMNS
from aide_memoire.engine.storage.postgres import (
    PostgresDatabase,
    postgres_repositories,
    schema,
    security,
)
from aide_memoire.engine.storage.rows import NewRow

from .backends import Backend, open_backend

# Word classes: each row of a family is one stem's forms, so a query in one form must
# find rows written in the others (porter), and accented forms find plain ones.
FAMILIES = [
    ["run", "runs", "running"], ["connect", "connected", "connection", "connecting"],
    ["happy", "happiness"], ["study", "studies", "studied"], ["paint", "painting", "painted"],
    ["swim", "swimming"], ["adopt", "adopted", "adoption"], ["travel", "travelled", "travels"],
]
ACCENTED = ["café", "naïve", "Zürich", "résumé", "São", "crème", "piñata", "Ångström"]
SPLIT = ["e-mail", "state_of_art", "v2.3", "o'clock", "rock&roll", "co-op", "x/y"]
SCRIPTS = ["Москва", "καλημέρα", "東京", "mañana", "straße", "İstanbul", "ﬁnance"]
NAMES = ["Caroline", "Melanie", "Jon", "Gina", "Audrey", "Nate"]
FILLER = [
    "the", "a", "and", "of", "to", "in", "on", "for", "with", "at", "by", "from", "about",
    "last", "week", "today", "friend", "family", "group", "support", "photo", "trip", "book",
    "music", "garden", "dinner", "school", "work", "project", "summer", "dog", "cat", "car",
]
NUMBERS = ["2023", "7", "42", "1999", "3rd", "10am"]
CLASSES = [w for f in FAMILIES for w in f] + ACCENTED + SPLIT + SCRIPTS + NAMES + NUMBERS
NS, OTHER = "project:a", "project:b"
WEIGHTS = [KEYWORD_WEIGHTS[c] for c in FTS_COLUMNS]


def _rows(seed: int) -> list[NewRow]:
    rng = random.Random(seed)
    start = datetime(2024, 3, 1, tzinfo=UTC)
    rows: list[NewRow] = []
    for i in range(90):
        words = rng.sample(FILLER, rng.randint(3, 14)) + rng.sample(CLASSES, rng.randint(0, 4))
        if rng.random() < 0.2:  # a word said twice: frequency matters
            words.append(rng.choice(CLASSES))
        rng.shuffle(words)
        turn = i < 60
        rows.append(NewRow(
            namespace=OTHER if i % 7 == 3 else NS,
            kind="turn" if turn else "note",
            content=" ".join(words).capitalize(),
            tags=rng.sample(CLASSES, rng.randint(0, 2)),
            observed_at=start + timedelta(days=i // 5, hours=i),
            session_id=f"s{i // 12}" if turn else None,
            speaker=rng.choice(NAMES) if turn else None,
            position=i % 12 if turn else None,
            status="quarantined" if i % 11 == 5 else "active",
        ))
    return rows


def _write(backend: Backend, rows: list[NewRow]) -> dict[int, int]:
    """The rows, inserted and indexed as the write path does; rowid -> place in ``rows``
    (each backend makes its own ids and rowids)."""
    store = backend.repos.rows
    ids: dict[int, int] = {}
    with backend.write() as tx:
        sessions: dict[tuple[str, str], list[int]] = {}
        for place, row in enumerate(rows):
            turn = row.session_id is not None
            rowid, _ = store.insert(tx, row, index=not turn)
            ids[rowid] = place
            if turn:
                assert row.session_id is not None and row.position is not None
                sessions.setdefault((row.namespace, row.session_id), []).append(row.position)
        for (namespace, session_id), positions in sessions.items():
            store.index_turns(tx, namespace, session_id, positions)
    return ids


@pytest.fixture(params=[1, 2])
def pair(request: pytest.FixtureRequest, tmp_path: Path, pg_url: str) -> Iterator[
        tuple[Backend, Backend, dict[int, int], dict[int, int], list[NewRow]]]:
    rows = _rows(request.param)
    with open_backend("sqlite", home=tmp_path, pg_url=None) as lite, \
            open_backend("postgres", home=tmp_path, pg_url=pg_url) as pg:
        yield lite, pg, _write(lite, rows), _write(pg, rows), rows


def _queries(rows: list[NewRow], seed: int) -> list[str]:
    """FTS5 expressions of each class recall and forget write (text.fts_query)."""
    rng = random.Random(seed)
    used = [w for r in rows for w in r.content.lower().split()]
    counts = {w: used.count(w) for w in set(used)}
    common = sorted(counts, key=lambda w: (-counts[w], w))[:5]
    rare = sorted(counts, key=lambda w: (counts[w], w))[:5]
    out: list[str | None] = []
    out += [fts_query([w]) for w in rng.sample(CLASSES, 8)]  # single words of each class
    out += [fts_query([c, r]) for c, r in zip(common, rare, strict=True)]  # rare + common
    out += [fts_query([rng.choice(f)]) for f in FAMILIES]  # a stem in any of its forms
    out += [fts_query([w.lower()]) for w in ["cafe", "naive", "zurich", "resume", "creme"]]
    out += [fts_query([w]) for w in SPLIT]  # words FTS5 splits: phrases
    out += [fts_query([f"{a} {b}"]) for a, b in zip(used[::9], used[1::9], strict=False)][:6]
    out += [fts_query(rng.sample(CLASSES, 3), all_of=rng.sample(FILLER, 2)) for _ in range(6)]
    out += [fts_query([rng.choice(NAMES)], all_of=[rng.choice(NAMES), rng.choice(FILLER)])
            for _ in range(4)]
    # Groups of many common words (recall's form in a big store: PostgreSQL joins their
    # postings on the row), one of them twice, and a group holding a phrase.
    out += [fts_query(rng.sample(CLASSES, 2), all_of=rng.sample(FILLER[:12], 5))
            for _ in range(3)]
    out += [fts_query([rng.choice(NAMES)], all_of=["the", "and", "the"])]
    out += [fts_query([rng.choice(NAMES)], all_of=[rng.choice(FILLER), rng.choice(SPLIT)])]
    out += [fts_query(["!!", "&&"]), fts_query(["friend"], all_of=["?!", "dog"])]
    return [q for q in out if q]


def _ranked(backend: Backend, ids: dict[int, int], match: str, where: RowFilter,
            weights: list[float] = WEIGHTS) -> list[tuple[int, float]]:
    with backend.read() as conn:
        found = backend.repos.keywords.search(conn, match, where, None, weights)
    return [(ids[rowid], score) for rowid, score in found]


def _same(lite: list[tuple[int, float]], pg: list[tuple[int, float]]) -> None:
    """Same rows in the same order and scores equal to rounding; rows that tie in
    score may come in either order (neither engine promises one)."""
    assert len(lite) == len(pg)
    for (lite_id, lite_score), (pg_id, pg_score) in zip(lite, pg, strict=True):
        assert pg_score == pytest.approx(lite_score, rel=1e-9, abs=1e-12)
        if lite_id != pg_id:
            tied = {i for i, s in lite if s == pytest.approx(lite_score, rel=1e-9, abs=1e-12)}
            assert {lite_id, pg_id} <= tied
    assert {i for i, _ in lite} == {i for i, _ in pg}


@pytest.mark.parametrize("where", [
    RowFilter(namespaces=[NS]),
    RowFilter(namespaces=[NS, OTHER]),
    RowFilter(namespaces=[OTHER], statuses=("active", "quarantined")),
    RowFilter(namespaces=[NS], kinds=["note"]),
], ids=["one-namespace", "two-namespaces", "statuses", "kinds"])
def test_every_query_class_ranks_and_scores_as_sqlite(
    pair: tuple[Backend, Backend, dict[int, int], dict[int, int], list[NewRow]],
    where: RowFilter,
) -> None:
    lite, pg, lite_ids, pg_ids, rows = pair
    matched = 0
    for match in _queries(rows, seed=len(rows)):
        expected = _ranked(lite, lite_ids, match, where)
        _same(expected, _ranked(pg, pg_ids, match, where))
        matched += bool(expected)
    assert matched >= 20  # the classes do find rows: the comparison is not of empty lists


def test_document_counts_and_edits_follow_sqlite(
    pair: tuple[Backend, Backend, dict[int, int], dict[int, int], list[NewRow]],
) -> None:
    lite, pg, lite_ids, pg_ids, rows = pair
    terms = [*CLASSES, "cafe", "friend", "state of art"]
    counts = []
    for backend in (lite, pg):
        with backend.read() as conn:
            counts.append(backend.repos.keywords.document_counts(conn, terms, 1000))
    assert counts[0] == counts[1] and sum(counts[0].values()) > 0
    capped = []  # a cap below the counts caps single words and phrases alike
    for backend in (lite, pg):
        with backend.read() as conn:
            capped.append(backend.repos.keywords.document_counts(conn, terms, 2))
    assert capped[0] == capped[1] == {t: min(n, 2) for t, n in counts[0].items()}
    # Removing and rewriting documents moves N, lengths and counts alike on both.
    for backend, ids in ((lite, lite_ids), (pg, pg_ids)):
        with backend.write() as tx:
            for rowid in sorted(ids)[::4]:
                backend.repos.keywords.remove(tx, rowid)
            for rowid in sorted(ids)[1::8]:
                backend.repos.keywords.remove(tx, rowid)
                backend.repos.keywords.add(tx, rowid, ("café friend", "", "", "", "", "", ""))
    where = RowFilter(namespaces=[NS, OTHER])
    for match in _queries(rows, seed=7):
        _same(_ranked(lite, lite_ids, match, where), _ranked(pg, pg_ids, match, where))


def test_step_11_indexes_what_a_step_10_store_holds(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store made before the postings (its documents were tsvectors) gets every row's
    document composed again by the migration, turns with their neighbours."""
    rows = _rows(3)
    # The code of a step-10 store: no step 11 nor later, its tables not yet under the policy.
    for later in [step for step in schema.STEPS if step > 10]:
        monkeypatch.delitem(schema.STEPS, later)
    monkeypatch.setattr(security, "_BY_NAMESPACE", (*(
        t for t in security._BY_NAMESPACE if not t.startswith("keyword_")), "memory_fts"))
    with PostgresDatabase(pg_url) as old:
        assert old.schema_version() == 10
        store = postgres_repositories().rows
        with old.write() as tx:
            written = {store.insert(tx, row, index=False)[0]: place
                       for place, row in enumerate(rows)}
    monkeypatch.undo()
    with open_backend("sqlite", home=tmp_path, pg_url=None) as lite, \
            open_backend("postgres", home=tmp_path, pg_url=pg_url) as pg:
        assert pg.db.applied == [step for step in sorted(schema.STEPS) if step > 10]
        lite_ids = _write(lite, rows)
        where = RowFilter(namespaces=[NS, OTHER], statuses=("active", "quarantined"))
        found = 0
        for match in _queries(rows, seed=11):
            expected = _ranked(lite, lite_ids, match, where)
            _same(expected, _ranked(pg, written, match, where))
            found += bool(expected)
        assert found >= 20


@pytest.mark.parametrize("weights", [
    [1.0, 0.0, 0.0, 0.0, 0.0],  # forget's: fewer weights than columns (the rest weigh 1.0)
    [0.2, 3.0, 1.0, 0.0, 2.5, 0.7, 1.1, 9.0],  # more (the extra is ignored)
    [2.0, 0.5, 0.25, 1.5, 0.1, 0.0, 4.0],
], ids=["short", "long", "other"])
def test_column_weights_apply_as_in_sqlite(
    pair: tuple[Backend, Backend, dict[int, int], dict[int, int], list[NewRow]],
    weights: list[float],
) -> None:
    lite, pg, lite_ids, pg_ids, rows = pair
    where = RowFilter(namespaces=[NS, OTHER])
    for match in _queries(rows, seed=5):
        _same(_ranked(lite, lite_ids, match, where, weights),
              _ranked(pg, pg_ids, match, where, weights))
