"""The same store ranks alike whenever it is asked (issue 28): recall's caches of
document counts and speaker names are keyed by what the store holds, not by the clock,
so a long-lived process ranks as a fresh one opened on the same file.

Built from classes: rows about a few topics in one set of words; a query sharing two of
them; then writes that make one of the query's words far more common (its idf falls).
"""

from __future__ import annotations

from pathlib import Path

from aide_memoire import Memory, Settings

TOPICS = ["harbour", "orchard", "library", "workshop", "bakery", "observatory"]
THINGS = ["lantern", "ladder", "kettle", "compass", "blanket", "notebook"]
QUERY = "where did I leave the lantern near the harbour"


def _settings(home: Path) -> Settings:
    return Settings(home=home, embedding_model="none", extract_facts=False)


def _ranking(memory: Memory) -> list[tuple[str, float]]:
    # Pure: relevance alone. Lifecycle scoring weighs recency by the clock and the
    # usage each recall records, which move between two calls whatever the index holds.
    return [(hit.id, hit.score)
            for hit in memory.recall(QUERY, namespace="n", limit=8, pure=True)]


def _rows(count: int, offset: int) -> list[dict[str, str]]:
    return [{"content": f"The {THINGS[(i + offset) % 6]} stayed in the "
                        f"{TOPICS[(i * 5 + offset) % 6]} after day {i + offset}"}
            for i in range(count)]


def test_a_long_lived_recall_ranks_as_a_fresh_process_after_writes(tmp_path: Path) -> None:
    with Memory(settings=_settings(tmp_path)) as memory:
        memory.store_many(_rows(30, 0), namespace="n")
        before = _ranking(memory)  # fills the caches
        # "harbour" goes from a sixth of the rows to most of them: its idf falls.
        memory.store_many([{"content": f"Boats came into the harbour on day {i}"}
                           for i in range(40)], namespace="n")
        memory.store("I left the lantern by the harbour wall", namespace="n")
        after = _ranking(memory)
    with Memory(settings=_settings(tmp_path)) as fresh:
        assert _ranking(fresh) == after
    assert after != before


def test_writes_by_another_process_reach_a_running_recall(tmp_path: Path) -> None:
    with Memory(settings=_settings(tmp_path)) as running:
        running.store_many(_rows(30, 0), namespace="n")
        before = _ranking(running)
        with Memory(settings=_settings(tmp_path)) as other:
            other.store_many([{"content": f"Boats came into the harbour on day {i}"}
                              for i in range(40)], namespace="n")
            other.store("I left the lantern by the harbour wall", namespace="n")
            theirs = _ranking(other)
        assert _ranking(running) == theirs
        assert theirs != before


def test_the_write_marker_moves_with_every_change_of_the_keyword_index(tmp_path: Path) -> None:
    """Added, changed, forgotten: each commit moves the marker the caches are keyed by;
    a read alone does not."""
    with Memory(settings=_settings(tmp_path)) as memory:
        store = memory.internals.recaller.store

        def marker() -> object:
            with memory.internals.db.read() as conn:
                return store.write_marker(conn)

        ids = memory.store_many(_rows(6, 0), namespace="n")
        seen = [marker()]
        _ranking(memory)
        assert marker() == seen[-1]
        memory.store("The kettle stayed in the bakery after day 99", namespace="n")
        seen.append(marker())
        memory.update(ids[0], namespace="n", tags=["harbour"])
        seen.append(marker())
        assert memory.forget(ids[1], namespace="n")
        seen.append(marker())
        # Same length and words, another text: only the index's own record tells.
        memory.update(ids[2], namespace="n", content=_rows(6, 0)[2]["content"] + " again")
        memory.update(ids[2], namespace="n", content=_rows(6, 0)[2]["content"])
        seen.append(marker())
        assert len(set(map(repr, seen))) == len(seen)
