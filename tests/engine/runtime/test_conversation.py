from __future__ import annotations

import pytest

from aide_memoire import InvalidInput, Memory


def test_turns_keep_position_reply_and_context(memory: Memory) -> None:
    first = memory.store_conversation(
        [
            {"speaker": "Ann", "content": "Shall we use Postgres?", "role": "user"},
            {"speaker": "Bot", "content": "Yes, version 16.", "metadata": {"n": 1}},
        ],
        namespace="c",
        session_id="s",
        observed_at="2024-01-02T03:04:05Z",
    )
    more = memory.store_conversation(
        [{"speaker": "Ann", "content": "And the pooler?"}], namespace="c", session_id="s",
        context_turns=2,
    )
    a, b = (memory.get(i, namespace="c") for i in first)
    c = memory.get(more[0], namespace="c")
    assert (a.position, b.position, c.position) == (0, 1, 2)
    assert (a.reply_to, b.reply_to, c.reply_to) == (None, a.id, b.id)
    # Stored neighbours reach the index through the session, not as copies in the row.
    assert (a.context, b.context, c.context) == (None, None, None)
    assert [h.id for h in memory.recall("postgres pooler", namespace="c", kinds=["turn"])][0] in (
        first[0], more[0]
    )
    assert a.kind == "turn" and a.role == "user" and b.metadata == {"n": 1}
    assert a.observed_at is not None and a.observed_at.year == 2024
    assert a.session_id == "s" and a.speaker == "Ann"


def test_preceding_turns_give_context_only(memory: Memory) -> None:
    ids = memory.store_conversation(
        [{"speaker": "B", "content": "It was red."}, {"speaker": "A", "content": "Nice."}],
        namespace="c",
        preceding=["A: Did you see the car?", {"speaker": "A", "content": "What colour was it?"}],
        context_turns=2,
    )
    first, second = (memory.get(i, namespace="c") for i in ids)
    assert first.context == "A: Did you see the car?\nA: What colour was it?"
    assert second.context == "A: What colour was it?"
    assert (first.position, second.position) == (2, 3)
    assert memory.status().memories == 2
    assert memory.recall("colour of the car", namespace="c")[0].id == ids[0]


def test_a_turn_is_found_by_its_neighbours_words_until_forgotten(memory: Memory) -> None:
    ids = memory.store_conversation(
        [
            {"speaker": "A", "content": "We adopted a greyhound called Zorblax!"},
            {"speaker": "B", "content": "Lovely, how old is he?"},
            {"speaker": "A", "content": "Three."},
        ],
        namespace="c",
        session_id="s",
    )
    hits = memory.recall("zorblax", namespace="c")
    assert [h.id for h in hits][:2] == ids[:2]  # the turn itself, then its reply
    assert ids[2] in [h.id for h in hits]  # two turns on: in its window
    memory.forget(ids[0], namespace="c")
    assert all("bm25" not in h.ranks for h in memory.recall("zorblax", namespace="c"))


def test_same_turn_twice_is_not_duplicated(memory: Memory) -> None:
    turns = [{"speaker": "A", "content": "ok"}, {"speaker": "B", "content": "ok"}]
    ids = memory.store_conversation(turns, namespace="c", session_id="s")
    assert len(set(ids)) == 2
    again = memory.store_conversation(turns, namespace="c", session_id="t")
    assert set(again).isdisjoint(ids)


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        ([], "turns is empty"),
        ([{"content": "no speaker"}], "needs a 'speaker'"),
        ([{"speaker": "A", "content": ""}], "turn 1: content is empty"),
        ([{"speaker": "A", "content": "x", "mood": "happy"}], "unknown fields"),
        (["just text"], "must be an object"),
    ],
)
def test_bad_turns(memory: Memory, turns: list[object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        memory.store_conversation(turns, namespace="c")  # type: ignore[arg-type]
    assert memory.status().memories == 0


def test_store_many(memory: Memory) -> None:
    ids = memory.store_many(
        [{"content": "one", "tags": ["a"]}, {"content": "two", "namespace": "other"}],
        namespace="main",
    )
    assert memory.get(ids[0], namespace="main").tags == ["a"]
    assert memory.get(ids[1], namespace="other").content == "two"
    with pytest.raises(InvalidInput, match="unknown fields"):
        memory.store_many([{"content": "x", "colour": "red"}])
