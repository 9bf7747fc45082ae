"""Turn links (engine/facts/turns.py) and the current-value stage (recall/stages.py).

The pure parts are checked on sentences of classes the update sets do not hold (a
school, a gym, a band, a bank); the write path on a real store with the packaged model,
on both backends: a change of value across sessions links, an addition, a restatement,
a change of another person, and a question about the past do not move anything.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aide_memoire import Memory
from aide_memoire.engine.core.kinds import set_classes
from aide_memoire.engine.core.text import query_shape
from aide_memoire.engine.facts.turns import (
    Turn,
    _questions,
    adds_one_more,
    changed,
    says_change,
    subjects,
    swapped,
)
from aide_memoire.engine.recall.fusion import RecallTuning
from aide_memoire.engine.recall.stages import RowFact, prefer_current

from .conftest import facts_settings

PEOPLE = frozenset({"ana", "bo"})
SECOND: dict[str, Any] = json.loads(
    (Path(__file__).parent / "conversational_updates2.json").read_text(encoding="utf-8"))
THIRD: dict[str, Any] = json.loads(
    (Path(__file__).parent / "conversational_updates3.json").read_text(encoding="utf-8"))
FOURTH: dict[str, Any] = json.loads(
    (Path(__file__).parent / "conversational_updates4.json").read_text(encoding="utf-8"))


def test_subject_follows_the_person_of_the_pronoun() -> None:
    assert subjects("I teach at Elmwood Primary.", "Ana", "Bo") == {"Ana"}
    assert subjects("So the Rovers signed you? Amazing.", "Ana", "Bo") == {"Bo"}
    assert subjects("Finally got the keys to the flat in Oulu.", "Ana", "Bo") == {"Ana"}
    assert subjects("I heard you play bass in Static Bloom now.", "Ana", "Bo") == {"Ana", "Bo"}
    assert subjects("Do you still bank with Harlow?", "Ana", "Bo") == {"Bo"}
    # a question without "I" or "you" is the asker's, unless read as the one asked's
    # (TurnTuning.asked, off); with "I" it is the asker's either way
    assert subjects("How's the new job at Quillby going?", "Ana", "Bo") == {"Ana"}
    assert subjects("How's the new job at Quillby going?", "Ana", "Bo", asked=True) == {"Bo"}
    assert subjects("Is the Saab still stalling on hills?", "Ana", "Bo", asked=True) == {"Bo"}
    assert subjects("Should I sell the Saab?", "Ana", "Bo", asked=True) == {"Ana"}
    assert subjects("The Saab stalled on the hill.", "Ana", "Bo", asked=True) == {"Ana"}
    assert subjects("How's the new job at Quillby going?", "Ana", None, asked=True) == {"Ana"}


def test_another_value_swaps_and_one_more_does_not() -> None:
    assert swapped("I teach at Elmwood Primary.", "These days I teach at Brookside.", PEOPLE, 14)
    assert swapped("I bank with Harlow.", "Leaving Harlow for Monzo was easy.", PEOPLE, 14)
    # the same value, no value at all, or one more of a kind already named
    assert not swapped("I teach at Elmwood.", "Elmwood is hard work.", PEOPLE, 14)
    assert not swapped("I love my job.", "I got a promotion at Brookside.", PEOPLE, 14)
    # two names, but nothing of a frame in common: two trips, not a change
    assert not swapped("Got back from Tallinn, the old town walls were unreal.",
                       "Spent a few days in Reykjavik, the hot springs were worth it.",
                       PEOPLE, 14)
    assert adds_one_more("My band Static Bloom plays on Fridays.",
                         "I joined a second band, Velvet Cove.")
    assert not adds_one_more("I teach at Elmwood.", "I got a new job at Brookside.")
    # the speakers' own names (and short forms of them) are not values
    assert not swapped("Thanks, Ana! I teach at Elmwood.", "Thanks, An! I teach at Elmwood.",
                       PEOPLE, 14)
    long = "I teach at Elmwood " + " ".join(f"word{n}x" for n in range(20))
    assert not swapped(long, "These days I teach at Brookside.", PEOPLE, 14)


def test_two_occasions_are_two_events_not_a_change() -> None:
    # what happened today with one person, then with another: events recur
    assert not swapped("Lunch with Priya today, she never stops talking.",
                       "Lunch with Tomas today, he barely said a word.", PEOPLE, 14)
    assert not swapped("Saw Marguerite at the pool this morning.",
                       "Saw Dimitri at the pool this morning.", PEOPLE, 14)
    # an occasion that names the old value beside the new one still says a change
    assert swapped("Marking at Elmwood tonight, as ever.",
                   "Last day at Elmwood today, Brookside from Monday.", PEOPLE, 14)
    # and one occasion against a standing statement is read as before
    assert swapped("I swim at the Ironworks pool.", "Tried the Lido pool today, never going back.",
                   PEOPLE, 14)


def test_members_of_a_set_valued_attribute_never_swap() -> None:
    # kin, the people around them, pets, languages, places been: two values named in
    # the same frame, with no "also" or "another", are two members, not a change
    assert not swapped("My nephew Arlo turned six on Friday.",
                       "My niece Bea turned four on Friday.", PEOPLE, 14)
    assert not swapped("Walked the hills with my flatmate Orla.",
                       "Walked the hills with Saoirse, my flatmate.", PEOPLE, 14)
    assert not swapped("I speak Basque at home.", "I speak Dutch at home.", PEOPLE, 14)
    assert not swapped("We toured Bergen by boat.", "We toured Oslo by boat.", PEOPLE, 14)
    assert not swapped("Our hamster Tig escaped.", "Our new hamster Pip escaped again.",
                       PEOPLE, 14)
    # one more member said with an ordinal, even when the older named no such noun
    assert adds_one_more("I adore Tig.", "We got a second hamster, Pip.")
    # a single-valued attribute in the same frame still swaps
    assert swapped("I'm dating Noor, she's lovely.", "I'm dating Sami now, it's lovely.",
                   PEOPLE, 14)
    assert swapped("I bank with Harlow.", "I bank with Monzo these days.", PEOPLE, 14)


def test_places_been_and_companions_are_sets_said_as_phrases() -> None:
    # places been, said by either speaker without a word of the class ("went to", "a
    # weekend in", "back from"): one more place, not a move
    assert not swapped("Spent a week in Ghent with the bikes.",
                       "So you flew to Lyon after Ghent?", PEOPLE, 14)
    assert not swapped("Just back from Krakow, superb food.",
                       "You went to Tallinn after Krakow?", PEOPLE, 14)
    # a companion named by the other speaker beside a friend named before
    assert not swapped("My pal Fenwick and I swim at the lido on Sundays.",
                       "Heard Oriel swims with you lot on Sundays.", PEOPLE, 14)
    assert not swapped("Climbing with my teammate Idris at the wall.",
                       "So Tamsin joined you at the wall?", PEOPLE, 14)
    # living, going somewhere as a habit, and "what's new with you" are none of these
    assert set_classes("I moved to Porto in May.") == set()
    assert set_classes("I go to Elmwood Gym.") == set()
    assert set_classes("Anyway, what's new with you?") == set()
    assert swapped("I go to Elmwood Gym.", "I go to Brookside Gym now.", PEOPLE, 14)


def test_the_cue_path_reads_a_said_change_without_a_name() -> None:
    # off by default (TurnTuning.cue_z None); its two text tests, on values without a name
    assert says_change("I coach the juniors now, the seniors were too much.")
    assert says_change("No longer on nights, thank goodness.")
    assert says_change("Switched to decaf after the doctor's visit.")
    assert not says_change("I coach the juniors on Tuesdays.")
    assert changed("I coach the seniors on Tuesdays.", "I coach the juniors now.", 14)
    # a restatement, one more member of a set, or an addition: no change
    assert not changed("I coach the juniors.", "I coach the juniors now.", 14)
    assert not changed("My niece plays violin.", "My nephew plays cello now.", 14)
    assert not changed("I knit scarves.", "I crochet hats now as well.", 14)
    # a change said about something else: no word of a frame in common
    assert not changed("The boiler makes a racket at night.", "I finally fixed the bike.", 14)


def test_a_reply_is_read_with_the_question_before_it() -> None:
    turns = [Turn(1, "a", "Bo", "s", 0, "t", "Still at Elmwood?"),
             Turn(2, "b", "Ana", "s", 1, "t", "Nope, Brookside since June."),
             Turn(3, "c", "Bo", "s", 2, "t", "Nice."),
             Turn(4, "d", "Bo", "s", 3, "t", "Is it far?")]
    assert {k: v.id for k, v in _questions(turns).items()} == {2: "a"}


def _facts(rows: dict[int, RowFact]) -> Any:
    return lambda wanted: {r: rows[r] for r in wanted if r in rows}


def test_the_current_value_stage_moves_only_a_later_other_value() -> None:
    on = RecallTuning(current_depth=5)
    rows = {
        1: RowFact(session="s1", at=1.0, speaker="Ana", names=frozenset({"elmwood"}), words=3),
        2: RowFact(session="s1", at=1.0, speaker="Ana", words=4),
        3: RowFact(session="s2", at=9.0, speaker="Ana", names=frozenset({"brookside"}),
                   words=4),
    }
    fused = {1: 0.9, 2: 0.8, 3: 0.5}
    shape = query_shape("Where does Ana teach?")
    moved = prefer_current(fused, shape, {1, 2, 3}, _facts(rows), on)
    assert sorted(moved, key=lambda r: -moved[r]) == [3, 1, 2]
    # off, a question about the past, or the same value later: nothing moves
    assert prefer_current(fused, shape, {1, 2, 3}, _facts(rows), RecallTuning()) == fused
    past = query_shape("Where did Ana teach before?")
    assert prefer_current(fused, past, {1, 2, 3}, _facts(rows), on) == fused
    same = dict(rows)
    same[3] = RowFact(session="s2", at=9.0, speaker="Ana", names=frozenset({"elmwood"}), words=4)
    assert prefer_current(fused, shape, {1, 2, 3}, _facts(same), on) == fused


@pytest.fixture(scope="module")
def memory(
    request: pytest.FixtureRequest, facts_backend: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Memory]:
    home: Path = tmp_path_factory.mktemp(f"tl-{facts_backend}")
    with facts_settings(request, facts_backend, home) as settings, Memory(settings=settings) as m:
        yield m


SMALL = ["Did you catch the storm last night?", "I'm so behind on emails.",
         "The kettle broke again.", "We should go hiking soon.", "Ha, true.",
         "My cousin got a puppy.", "Traffic was terrible.", "I watched a good film.",
         "Work has been a lot.", "The weather turned cold."]


def _chat(memory: Memory, namespace: str, first: list[tuple[str, str]],
          second: list[tuple[str, str]]) -> list[list[str]]:
    out = []
    for number, (key, at) in enumerate(((first, "2024-01-10T10:00:00Z"),
                                        (second, "2024-07-02T10:00:00Z"))):
        turns = [{"speaker": ("Bo", "Ana")[i % 2], "content": t} for i, t in enumerate(SMALL)]
        turns[4:4] = [{"speaker": s, "content": t} for s, t in key]
        out.append(memory.store_conversation(turns, namespace=namespace,
                                             session_id=f"s{number}", observed_at=at))
    return out


def _replaced(memory: Memory, namespace: str) -> dict[str, str]:
    return {r.content: str(r.superseded_by) for r in memory.search(
        namespace=namespace, limit=100, include_superseded=True) if r.superseded_by}


def test_a_change_of_value_links_and_ranks_first_now(memory: Memory) -> None:
    ns = "tl-change"
    ids = _chat(memory, ns, [("Ana", "I teach maths at Elmwood Primary.")],
                [("Ana", "These days I teach at Brookside Academy, a longer commute.")])
    old, new = ids[0][4], ids[1][4]
    assert _replaced(memory, ns) == {"I teach maths at Elmwood Primary.": new}
    now = memory.recall("Which school does Ana teach at?", namespace=ns, limit=3)
    assert now[0].id == new
    then = memory.recall("Which school does Ana teach at?", namespace=ns, limit=3,
                         as_of="2024-04-01T00:00:00Z")
    assert then[0].id == old
    # a question about what happened keeps the turns in the order their words give
    past = memory.recall("What did Ana say about Elmwood Primary?", namespace=ns, limit=3)
    assert past[0].id == old


def test_additions_restatements_and_other_people_stay_unlinked(memory: Memory) -> None:
    cases = {
        "tl-add": ([("Ana", "My band Static Bloom plays on Fridays.")],
                   [("Ana", "I joined a second band, Velvet Cove.")]),
        "tl-also": ([("Ana", "We bank with Harlow.")],
                    [("Ana", "We also opened an account with Monzo.")]),
        "tl-same": ([("Ana", "I teach at Elmwood Primary.")],
                    [("Ana", "Elmwood Primary is still hard work, but I love it.")]),
        "tl-other": ([("Ana", "I teach at Elmwood Primary.")],
                     [("Bo", "I started at Brookside Academy myself.")]),
    }
    for ns, (first, second) in cases.items():
        _chat(memory, ns, first, second)
        assert _replaced(memory, ns) == {}, ns


def test_an_old_value_said_as_a_reply_is_replaced(memory: Memory) -> None:
    # The old value was said as a reply; the newer names it beside the new one.
    ns = "tl-reply-old"
    ids = _chat(memory, ns, [("Bo", "What are you driving these days?"),
                             ("Ana", "A battered old Volvo estate.")],
                [("Ana", "Sold the Volvo, I drive a Tesla now.")])
    assert _replaced(memory, ns) == {"A battered old Volvo estate.": ids[1][4]}


CONTROLS = [(n, c) for n, data in (("2", SECOND), ("3", THIRD), ("4", FOURTH))
            for c in data["controls"]]


@pytest.mark.parametrize(("which", "item"), CONTROLS,
                         ids=[f"{n}-{c['id']}" for n, c in CONTROLS])
def test_the_sets_controls_stay_unlinked(memory: Memory, which: str, item: dict[str, Any]
                                         ) -> None:
    namespace = f"tl{which}-" + item["id"].replace(":", "-")
    for number, session in enumerate(item["sessions"]):
        memory.store_conversation(
            [{"speaker": t["speaker"], "content": t["text"]} for t in session["turns"]],
            namespace=namespace, session_id=f"session_{number + 1}", observed_at=session["at"])
    assert _replaced(memory, namespace) == {}
