"""Knowledge updates said in conversation (conversational_updates.json, written from
classes by bench/conv_updates_gen.py before any stage was tuned; split by sha1 of the id).

Controls only add (a second pet, another hobby, another language...): no turn of theirs
may be linked as superseded, on either backend. For the scenarios, where a fact changes
between two sessions months apart, the turn of the earlier session is never marked
superseded by a turn of a session before it, and ``as_of`` a day before the second
session never returns a turn of that session. Ranking figures (top-1 now and ``as_of``)
are the benchmark's (bench/conv_updates.py), not asserted here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aide_memoire import Memory

from .conftest import facts_settings

DATA: dict[str, Any] = json.loads(
    (Path(__file__).parent / "conversational_updates.json").read_text(encoding="utf-8"))
CONTROLS: list[dict[str, Any]] = DATA["controls"]
SCENARIOS: list[dict[str, Any]] = DATA["scenarios"]


@pytest.fixture(scope="module")
def memory(
    request: pytest.FixtureRequest, facts_backend: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Memory]:
    home: Path = tmp_path_factory.mktemp(f"cu-{facts_backend}")
    with facts_settings(request, facts_backend, home) as settings, Memory(settings=settings) as m:
        yield m


def _store(memory: Memory, item: dict[str, Any], namespace: str) -> list[list[str]]:
    return [
        memory.store_conversation(
            [{"speaker": t["speaker"], "content": t["text"]} for t in session["turns"]],
            namespace=namespace, session_id=f"session_{n + 1}", observed_at=session["at"])
        for n, session in enumerate(item["sessions"])
    ]


def test_the_sets_are_split_and_large_enough() -> None:
    held_out = [s for s in SCENARIOS if s["split"] == "held-out"]
    assert len(held_out) >= 30
    assert {s["cls"].split(":")[0] for s in held_out} == {
        "job", "home", "tool", "role", "habit", "relationship"}
    assert {s["cls"].split(":")[1] for s in SCENARIOS} == {"plain", "passing", "other", "reply"}
    assert len(CONTROLS) >= 12


@pytest.mark.parametrize("item", CONTROLS, ids=[c["id"] for c in CONTROLS])
def test_controls_that_only_add_stay_unlinked(memory: Memory, item: dict[str, Any]) -> None:
    namespace = "cu-" + item["id"].replace(":", "-")
    _store(memory, item, namespace)
    rows = memory.search(namespace=namespace, limit=100, include_superseded=True)
    assert len(rows) == sum(len(s["turns"]) for s in item["sessions"])
    assert not [r.content for r in rows if r.superseded_by], "an add-only turn was linked"


@pytest.mark.parametrize("item", SCENARIOS[::6], ids=[s["id"] for s in SCENARIOS[::6]])
def test_as_of_before_the_change_sees_only_the_first_session(
    memory: Memory, item: dict[str, Any]
) -> None:
    namespace = "cu-" + item["id"].replace(":", "-")
    ids = _store(memory, item, namespace)
    then = memory.recall(item["query"], namespace=namespace, limit=20, as_of=item["as_of"])
    assert then, "nothing recalled as of the first session"
    assert {h.id for h in then} <= set(ids[0])
    rows = {r.id: r for r in memory.search(namespace=namespace, limit=100,
                                           include_superseded=True)}
    for first in ids[0]:
        replacement = rows[first].superseded_by
        assert replacement is None or replacement in ids[1]
    for second in ids[1]:
        assert rows[second].superseded_by not in ids[0]
