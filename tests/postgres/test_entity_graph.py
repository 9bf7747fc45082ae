"""The entity graph repository (``Repositories.entities``) on both backends: the same
calls, the same answers, including the two statements each backend writes its own way
(the filter of ``mentioning`` and the prefix range of ``named_like``)."""

from __future__ import annotations

from aide_memoire.engine.core import clock
from aide_memoire.engine.storage.filter import RowFilter
from aide_memoire.engine.storage.portable.links import drop_mentions
from aide_memoire.engine.storage.portable.review import has_item_for_fact
from aide_memoire.engine.storage.rows import NewRow
from aide_memoire.engine.trust import review

from .backends import Backend

NS, OTHER = "project:alpha", "project:beta"
# Names that start with "post" in byte order, and some that sort near them in a
# language collation but do not start with it ("post-mortem" is one that does).
NAMES = ["post", "postgres", "postgresql", "post-mortem", "posting", "pos", "posz",
         "pöst", "Post", "apost", "post\u00e9"]


def _entities(b: Backend) -> dict[str, int]:
    stamp = clock.format_time(clock.now())
    with b.write() as tx:
        b.repos.entities.add_entities(
            tx, [(NS, n, n.title(), "name", stamp) for n in NAMES]
            + [(OTHER, "postgres", "Postgres", "tech", stamp)])
        b.repos.entities.add_entities(tx, [(NS, "postgres", "POSTGRES", "tech", stamp)])
    with b.read() as conn:
        return {str(n): int(i) for i, n in conn.execute(
            "SELECT id, name FROM entities WHERE namespace = ?", (NS,))}


def test_a_known_name_is_kept_once_with_its_first_spelling(backend: Backend) -> None:
    ids = _entities(backend)
    assert sorted(ids) == sorted(NAMES)
    with backend.read() as conn:
        (display, kind), = conn.execute(
            "SELECT display, type FROM entities WHERE namespace = ? AND name = 'postgres'",
            (NS,)).fetchall()
    assert (display, kind) == ("Postgres", "name")


def test_named_like_finds_exact_names_and_longer_names_with_the_prefix(
    backend: Backend,
) -> None:
    ids = _entities(backend)
    with backend.read() as conn:
        found = backend.repos.entities.named_like(conn, NS, ["pos", "nothing"], "post")
    # Longer than "post" and starting with it, code point by code point; "pos" exactly.
    want = {"postgres", "postgresql", "post-mortem", "posting", "post\u00e9", "pos"}
    assert sorted(found) == sorted((ids[n], n) for n in want)


def test_mentioning_ranks_by_mentions_then_newest_and_applies_the_filter(
    backend: Backend,
) -> None:
    ids = _entities(backend)
    rows = []
    for text, status in [("one", "active"), ("two", "active"), ("three", "active"),
                         ("held", "quarantined")]:
        with backend.write() as tx:
            rows.append(backend.repos.rows.insert(
                tx, NewRow(namespace=NS, kind="note", content=text, status=status)))
    a, b, c = ids["postgres"], ids["posting"], ids["pos"]
    with backend.write() as tx:
        backend.repos.entities.add_mentions(tx, [
            (rows[0][0], a, "rule"), (rows[1][0], a, "rule"), (rows[1][0], b, "rule"),
            (rows[2][0], c, "rule"), (rows[3][0], a, "rule"), (rows[3][0], b, "rule")])
        backend.repos.entities.add_mentions(tx, [(rows[0][0], a, "gliner")])  # kept once
    with backend.read() as conn:
        got = backend.repos.entities.mentioning(conn, [a, b], RowFilter(namespaces=[NS]), 10)
        limited = backend.repos.entities.mentioning(conn, [a, b, c],
                                                    RowFilter(namespaces=[NS]), 2)
        elsewhere = backend.repos.entities.mentioning(conn, [a], RowFilter(namespaces=[OTHER]),
                                                      10)
        of_two = backend.repos.entities.entities_of_memory(conn, rows[1][1], NS)
    assert got == [(rows[1][1], "two", [a, b]), (rows[0][1], "one", [a])]
    assert [m[0] for m in limited] == [rows[1][1], rows[2][1]]  # newest first on a tie
    assert elsewhere == []
    assert sorted(of_two) == sorted([(a, "postgres"), (b, "posting")])


def test_forgetting_a_memory_drops_its_lonely_entities_and_their_edges(
    backend: Backend,
) -> None:
    ids = _entities(backend)
    with backend.write() as tx:
        (first, _), (second, _) = (
            backend.repos.rows.insert(tx, NewRow(namespace=NS, kind="note", content=t))
            for t in ("alpha", "beta"))
        backend.repos.entities.add_mentions(tx, [
            (first, ids["postgres"], "rule"), (first, ids["posting"], "rule"),
            (second, ids["posting"], "rule")])
        backend.repos.entities.add_similar_edges(
            tx, [(NS, ids["postgres"], ids["posting"], "t"), (NS, ids["pos"], ids["posz"], "t")],
            0.5)
        drop_mentions(tx, first)
    with backend.read() as conn:
        names = {str(n) for (n,) in conn.execute(
            "SELECT name FROM entities WHERE namespace = ?", (NS,))}
        edges = [tuple(e) for e in conn.execute("SELECT a, b, kind, weight FROM entity_edges")]
    assert "postgres" not in names and "posting" in names  # still mentioned by the second
    assert edges == [(ids["pos"], ids["posz"], "similar", 0.5)]


def test_a_raised_conflict_is_found_by_its_kept_fact(backend: Backend) -> None:
    with backend.write() as tx:
        review.open_item(tx, namespace=NS, kind="fact_conflict", memory_id="m1",
                         evidence={"kept": {"fact": 12, "memory_id": "m1"}})
        review.open_item(tx, namespace=NS, kind="fact_conflict", memory_id="m2",
                         evidence={"kept": {"fact": "12"}})
    with backend.read() as conn:
        assert has_item_for_fact(conn, "fact_conflict", "m1", 12)
        assert not has_item_for_fact(conn, "fact_conflict", "m1", 13)
        assert not has_item_for_fact(conn, "fact_update", "m1", 12)
        assert not has_item_for_fact(conn, "fact_conflict", "m2", 12)  # a string is not 12
        assert backend.repos.review.has_item_for_fact(conn, "fact_conflict", "m1", 12)
