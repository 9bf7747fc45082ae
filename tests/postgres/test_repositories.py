"""The repositories of engine/storage/repositories.py on both backends: the same calls, the
same answers (rows, filters, keyword ranking, vectors, links, supersession, statistics).

Each test runs once on SQLite and once on a fresh PostgreSQL database (the ``backend``
fixture); :func:`test_both_backends_rank_alike` writes one corpus into both at once
and compares their answers directly.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from aide_memoire.engine.core import clock
from aide_memoire.engine.core.text import fts_query
from aide_memoire.engine.recall.embed import EmbeddingSpace
from aide_memoire.engine.recall.fusion import KEYWORD_WEIGHTS
from aide_memoire.engine.storage.filter import RowFilter
from aide_memoire.engine.storage.migrations import FTS_COLUMNS
from aide_memoire.engine.storage.rows import NewRow, content_hash
from aide_memoire.engine.trust.forget import match_all

from .backends import Backend, open_backend
from .conftest import PgServer, new_database

NS = "project:alpha"
OTHER = "project:beta"
WEIGHTS = [KEYWORD_WEIGHTS[c] for c in FTS_COLUMNS]
SPACE = EmbeddingSpace(model="test-model", dim=8)
LATER = clock.format_time(clock.now())
EARLIER = clock.format_time(clock.now() - timedelta(days=400))


def _store(b: Backend, content: str, **fields: object) -> tuple[int, str]:
    namespace = str(fields.pop("namespace", NS))
    kind = str(fields.pop("kind", "note"))
    index = bool(fields.pop("index", True))
    row = NewRow(namespace=namespace, kind=kind, content=content, **fields)  # type: ignore[arg-type]
    with b.write() as tx:
        return b.repos.rows.insert(tx, row, index=index)


def _search(b: Backend, terms: list[str], *, all_of: list[str] | None = None,
            **where: object) -> list[int]:
    match = fts_query(terms, all_of=all_of)
    assert match is not None
    with b.read() as conn:
        return [r for r, _ in b.repos.rows.keyword_search(
            conn, match, RowFilter(namespaces=[NS], **where), None,  # type: ignore[arg-type]
            WEIGHTS)]


def test_rows_round_trip_and_exact_duplicates(backend: Backend) -> None:
    rowid, memory_id = _store(backend, "Deploys go out on Tuesdays", tags=["ops", "deploy"],
                              importance=0.8, metadata={"ticket": 42, "who": "Zoë"})
    turn, _ = _store(backend, "hello there", kind="turn", session_id="s1", position=0,
                     speaker="ann", role="user")
    rows = backend.repos.rows
    with backend.read() as conn:
        record = rows.get(conn, memory_id, NS)
        assert record is not None and rows.get(conn, memory_id, OTHER) is None
        assert (record.content, record.tags, record.importance) == (
            "Deploys go out on Tuesdays", ["ops", "deploy"], 0.8)
        assert record.metadata == {"ticket": 42, "who": "Zoë"}
        assert rows.get_by_rowid(conn, rowid) == record
        assert rows.rowid_of(conn, memory_id, NS) == rowid
        assert rows.identity(conn, rowid) == (memory_id, NS, content_hash(record.content))
        assert rows.find_exact(conn, NS, "Deploys go out on Tuesdays", "note", None, None) \
            == memory_id
        assert rows.find_exact(conn, NS, "Deploys go out on Tuesdays", "learning", None,
                               None) is None
        assert rows.find_exact(conn, NS, "hello there", "turn", "s1", 0) is not None
        assert rows.find_exact(conn, NS, "hello there", "turn", "s1", 1) is None
        assert rows.find_exact(conn, NS, "hello there", "turn", None, None) is None
        assert [t.content for t in rows.session_tail(conn, NS, "s1", 5)] == ["hello there"]
        assert rows.speakers(conn, [rowid, turn]) == {turn: "ann"}
        assert rows.speaker_names(conn, NS) == ["ann"]
        assert rows.namespace_counts(conn) == {NS: 2}
        assert rows.size_hint(conn) >= 2
        assert rows.existing_ids(conn, [memory_id, "nope"]) == {memory_id}


def test_filters_keep_the_same_rows(backend: Backend) -> None:
    now = clock.now()
    old, _ = _store(backend, "an old learning", kind="learning", tags=["a"],
                    observed_at=now - timedelta(days=30), importance=0.2)
    new, _ = _store(backend, "a new note", tags=["b", "a"], importance=0.9)
    quarantined, _ = _store(backend, "held back", status="quarantined")
    _store(backend, "elsewhere", namespace=OTHER)
    rows = backend.repos.rows

    def ids(**where: object) -> list[int]:
        with backend.read() as conn:
            return rows.rowids(conn, RowFilter(namespaces=[NS], **where), 50)  # type: ignore[arg-type]

    assert ids() == [old, new]
    assert ids(statuses=("active", "quarantined")) == [old, new, quarantined]
    assert ids(kinds=["learning"]) == [old]
    assert ids(tags=["b"]) == [new] and ids(tags=["a"]) == [old, new] and ids(tags=["z"]) == []
    assert ids(min_importance=0.5) == [new]
    assert ids(since=now - timedelta(days=1)) == [new]
    assert ids(until=now - timedelta(days=1)) == [old]
    with backend.read() as conn:
        listed = rows.list(conn, RowFilter(namespaces=[NS, OTHER]), 10)
        assert [r.content for r in listed][-1] == "an old learning"  # newest first
        assert backend.passing(conn, [old, new, quarantined], RowFilter(namespaces=[NS],
                               tags=["a"])) == {old, new}
        assert rows.count_in(conn, [NS]) == 3 and rows.count_status(conn, NS, "quarantined") == 1


def test_keyword_search_ranks_stems_folds_and_filters(backend: Backend) -> None:
    rare, _ = _store(backend, "The zeppelin landed near the café at dawn")
    for i in range(6):
        _store(backend, f"The weekly meeting {i} discussed the budget")
    running, _ = _store(backend, "She runs the marathon every spring")
    both, _ = _store(backend, "The budget for the zeppelin hangar meeting")
    held, _ = _store(backend, "zeppelin in quarantine", status="quarantined")
    _store(backend, "zeppelin elsewhere", namespace=OTHER)

    # The rare word outweighs the common ones: both zeppelin rows come before any
    # meeting-only row, and the one holding every word comes first.
    found = _search(backend, ["zeppelin", "meeting", "budget"])
    assert found[0] == both and set(found[:2]) == {both, rare}
    assert len(found) == 8 and held not in found
    assert _search(backend, ["running"]) == [running]  # stemmed as porter does
    assert _search(backend, ["cafe"]) == [rare]  # diacritics folded on both sides
    assert held in _search(backend, ["zeppelin"], statuses=("active", "quarantined"))
    # An AND group: only rows holding every word of it (or an OR-ed term).
    assert set(_search(backend, ["marathon"], all_of=["zeppelin", "hangar"])) == {both, running}
    assert _search(backend, ["marathon"], all_of=["zeppelin", "absent"]) == [running]
    with backend.read() as conn:  # every word (forget's query): an AND at the top level
        every_word = match_all("zeppelin budget")
        assert every_word is not None
        found_all = backend.repos.rows.keyword_search(
            conn, every_word, RowFilter(namespaces=[NS]), None, WEIGHTS)
    assert [r for r, _ in found_all] == [both]
    assert _search(backend, ['quoted "word"']) == []  # a quote is data, never syntax
    with backend.read() as conn:
        counts = backend.repos.rows.document_counts(conn, ["zeppelin", "meeting", "absent"], 100)
        assert counts == {"zeppelin": 4, "meeting": 7, "absent": 0}
        assert backend.repos.rows.common_terms(conn, ["zeppelin", "meeting"], 5) == {"meeting"}


def test_updates_and_deletes_follow_into_the_keyword_index(backend: Backend) -> None:
    rowid, _ = _store(backend, "the aardvark sleeps")
    keep, _ = _store(backend, "the badger digs")
    rows = backend.repos.rows
    with backend.write() as tx:
        rows.update_fields(tx, rowid, {"content": "the pangolin sleeps", "tags": ["x"]})
    assert _search(backend, ["aardvark"]) == [] and _search(backend, ["pangolin"]) == [rowid]
    with backend.write() as tx:
        rows.delete(tx, rowid)
    assert _search(backend, ["pangolin"]) == [] and _search(backend, ["badger"]) == [keep]
    with backend.read() as conn:
        assert rows.get_by_rowid(conn, rowid) is None


def test_a_turns_neighbours_are_searchable_through_it(backend: Backend) -> None:
    a, _ = _store(backend, "what should we name the cat", kind="turn", session_id="s",
                  position=0, speaker="ann", index=False)
    b, _ = _store(backend, "Marmalade, obviously", kind="turn", session_id="s", position=1,
                  speaker="bob", index=False)
    with backend.write() as tx:
        backend.repos.rows.index_turns(tx, NS, "s", [0, 1])
    assert set(_search(backend, ["marmalade"])) == {a, b}  # a's doc quotes its reply
    assert _search(backend, ["marmalade"])[0] == b  # the turn itself ranks first


def _vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(SPACE.dim).astype(np.float32)
    return v / np.linalg.norm(v)


def test_vectors_round_trip_and_the_mirror_state(backend: Backend) -> None:
    first, first_id = _store(backend, "one")
    second, _ = _store(backend, "two")
    turn, _ = _store(backend, "three", kind="turn", session_id="s", position=0)
    vectors = backend.repos.vectors
    stamp = clock.format_time(clock.now())
    with backend.read() as conn:
        assert vectors.table_of(conn, SPACE) is None
        assert vectors.missing(conn, SPACE, NS, 10) == [first, second, turn]
    with backend.write() as tx:
        vectors.insert(tx, SPACE, [(first, NS, _vec(1)), (second, NS, _vec(2))], stamp)
        vectors.insert(tx, SPACE, [(turn, NS, _vec(3))], stamp)

    def state() -> tuple[int, int]:
        with backend.read() as conn:
            row = conn.execute("SELECT max_rowid, epoch FROM vector_state WHERE space = ? "
                               "AND namespace = ?", (SPACE.key, NS)).fetchone()
        return int(row[0]), int(row[1])

    assert state() == (turn, 0)  # appends only: the mirror keeps its slice
    with backend.read() as conn:
        table = vectors.table_of(conn, SPACE)
        assert table is not None and vectors.spaces(conn)[0][1:3] == ("test-model", 8)
        assert vectors.missing(conn, SPACE, NS, 10) == []
        assert vectors.count_missing(conn, SPACE, None) == 0
        assert vectors.embedding_of(conn, SPACE, first_id) == _vec(1).tobytes()
        dedup = vectors.dedup_rows(conn, table, NS, ["note"], above=0, below=None,
                                   active_only=True)
        assert [(r, blob) for r, _, _, blob in dedup] == [
            (first, _vec(1).tobytes()), (second, _vec(2).tobytes())]
    with backend.write() as tx:
        vectors.insert(tx, SPACE, [(first, NS, _vec(9))], stamp)  # a replacement
    assert state() == (turn, 1)
    with backend.write() as tx:
        backend.repos.rows.delete(tx, second)
    assert state() == (turn, 2)
    with backend.read() as conn:
        assert vectors.embedding_of(conn, SPACE, first_id) == _vec(9).tobytes()
        assert vectors.count_missing(conn, SPACE, NS) == 0
        assert [r for r, *_ in vectors.dedup_rows(conn, table, NS, ["note"], above=0,
                                                   below=None, active_only=True)] == [first]


def test_links_statistics_and_supersession(backend: Backend) -> None:
    a_row, a = _store(backend, "alpha", metadata={"uuid": "u1", "expires_at": "2020-01-01"})
    b_row, b = _store(backend, "beta", metadata={"uuid": "u2", "expires_at": 1700000000})
    s_row, s = _store(backend, "a summary", kind="summary", metadata={"sources": [a]})
    rows, links = backend.repos.rows, backend.repos.links
    stamp = clock.format_time(clock.now())
    with backend.write() as tx:
        links.add(tx, (s, a, "summarizes", None, NS, stamp))
        links.add(tx, (s, a, "summarizes", 0.5, NS, stamp))  # a repeat: ignored
        links.add(tx, (b, a, "near_duplicate", 0.93, NS, stamp))
        rows.record_access(tx, [(2, LATER, a)])
        rows.record_access(tx, [(1, EARLIER, a)])  # older: count only
        rows.set_utility(tx, b, 0.75)
    with backend.read() as conn:
        assert sorted(links.of(conn, a)) == sorted([(b, a, "near_duplicate", 0.93),
                                                    (s, a, "summarizes", None)])
        assert links.sources_of(conn, a, "summarizes", NS) == {s}
        assert links.between_active(conn, NS, "near_duplicate") == [(b, a, 0.93)]
        record = rows.get(conn, a, NS)
        assert record is not None and record.access_count == 3
        assert record.last_accessed_at is not None
        assert clock.format_time(record.last_accessed_at) == LATER
        assert dict(rows.metadata_expiries(conn, NS)) == {a: "2020-01-01", b: 1700000000}
        assert rows.summaries_citing(conn, NS, a, []) == [(s_row, s, f'{{"sources": ["{a}"]}}')]
        assert [i for _, i, _ in rows.summaries_citing(conn, NS, "other", [s])] == [s]
        assert [u for _, _, u, *_ in rows.usage(conn, [b_row])] == [0.75]
    with backend.write() as tx:
        rows.retire_replaced(tx, a, NS, valid_to=stamp, by=b, at=stamp)
    with backend.read() as conn:
        assert rows.kind_status_replacement(conn, a, NS) == ("note", "superseded", b)
        assert rows.replacements(conn, [a_row]) == [(a_row, b_row)]
        assert links.between_active(conn, NS, "near_duplicate") == []
    with backend.write() as tx:
        rows.undo_supersession(tx, a, NS, b)
    with backend.read() as conn:
        assert rows.kind_status_replacement(conn, a, NS) == ("note", "active", None)


def test_metadata_values_of_one_source(backend: Backend) -> None:
    for uuid in ("u1", "u2"):
        _store(backend, f"turn {uuid}", kind="turn", source="capture", metadata={"uuid": uuid},
               session_id="s", position=int(uuid[1]))
    _store(backend, "other", kind="turn", source="manual", metadata={"uuid": "u9"},
           session_id="t", position=0)
    with backend.read() as conn:
        assert backend.repos.rows.metadata_values(conn, NS, "turn", "capture", "uuid") == {
            "u1", "u2"}
        with pytest.raises(ValueError, match="plain name"):
            backend.repos.rows.metadata_values(conn, NS, "turn", "capture", "a') OR (1")


def test_both_backends_rank_alike(pg_server: PgServer, tmp_path: Path) -> None:
    """One corpus, written into both: the same rows come back, in the same order where
    the ranking is not a near tie."""
    subjects = ["kayak", "violin", "compiler", "glacier", "saffron", "turbine"]
    verbs = ["repaired", "painted", "studied", "described", "measured"]
    corpus = [f"Ann {v} the {s} on day {i}" for i, (s, v) in enumerate(
        (s, v) for s in subjects for v in verbs)]
    corpus += [f"The {s} and the {t} were {v} together" for s, t, v in zip(
        subjects, subjects[1:], verbs, strict=False)]
    with new_database(pg_server) as url, \
            open_backend("sqlite", home=tmp_path, pg_url=None) as lite, \
            open_backend("postgres", home=tmp_path, pg_url=url) as pg:
        for text in corpus:
            assert _store(lite, text)[0] == _store(pg, text)[0]
        for terms in (["kayak"], ["violin", "glacier"], ["painted", "saffron"],
                      ["turbine", "compiler", "measured"]):
            a, b = _search(lite, terms), _search(pg, terms)
            assert set(a) == set(b), terms
            assert a[0] == b[0] or len(terms) > 1, terms
            assert set(a[:3]) & set(b[:3]), terms
        with lite.read() as c1, pg.read() as c2:
            where = RowFilter(namespaces=[NS], tags=None)
            assert [r.content for r in lite.repos.rows.list(c1, where, 100)] == [
                r.content for r in pg.repos.rows.list(c2, where, 100)]


def test_review_lookups_read_the_evidence(backend: Backend) -> None:
    stamp = clock.format_time(clock.now())
    with backend.write() as tx:
        tx.executemany(
            "INSERT INTO review_items (id, namespace, kind, memory_id, evidence, status, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [("r1", NS, "fact_conflict", "m1", '{"kept": {"fact": 7}}', "approved", stamp),
             ("r2", NS, "demote", "m2", '{"key": "demote:m2"}', "rejected", stamp),
             ("r3", NS, "merge", "m3", '{"key": "merge:m3"}', "approved", stamp)],
        )
    review = backend.repos.review
    with backend.read() as conn:
        assert review.has_item_for_fact(conn, "fact_conflict", "m1", 7)
        assert not review.has_item_for_fact(conn, "fact_conflict", "m1", 8)
        assert not review.has_item_for_fact(conn, "fact_conflict", "m2", 7)
        assert review.has_open_proposal(conn, NS, "demote", "demote:m2")  # rejected counts
        assert not review.has_open_proposal(conn, NS, "merge", "merge:m3")  # decided yes
        assert not review.has_open_proposal(conn, OTHER, "demote", "demote:m2")
