"""Generate the conversational knowledge-update sets (tests/facts/conversational_updates.json).

    python bench/conv_updates_gen.py [--out tests/facts/conversational_updates.json]

Written from classes before any recall stage was tuned (issue #31). Each scenario is two
chat sessions between two people, months apart; a fact about one of them is stated in
the first session and changed in the second. Six attributes (job, home, tool, role,
habit, relationship) times four phrasings of the change (plain; in passing, inside a
sentence about something else; by the other speaker; as a reply to a question), each
session padded with small talk that reuses the attribute's words. Controls only add (a
second pet, another hobby, another language, another instrument, a new friend): both
statements stay true, and nothing may be linked as superseded.

Each scenario carries a ``split`` chosen by a fixed hash of its id (sha1, even: "tune",
odd: "held-out"), so that tuning reads only one half. Deterministic: a fixed seed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "tests" / "facts" / "conversational_updates.json"

NAMES = ["Priya", "Tomasz", "Aiyana", "Kofi", "Marisol", "Henrik", "Yusuf", "Ines", "Dmitri",
         "Leilani", "Oskar", "Nadia", "Bram", "Esperanza", "Ravi", "Sunniva", "Teodor",
         "Amara", "Casimir", "Rosalind", "Jun", "Fenna", "Idris", "Maelle", "Thiago", "Wren"]

# attribute -> (old values, new values) pools; the change picks one of each.
VALUES: dict[str, list[str]] = {
    "job": ["Nordwind Logistics", "Brightleaf Health", "Corvid Analytics", "Halden Foods",
            "Marlow Insurance", "Tessaract Games", "Quillon Bank", "Ostrava Motors"],
    "home": ["Bristol", "Leeds", "Porto", "Tampere", "Ghent", "Valencia", "Halifax", "Lyon"],
    "tool": ["MongoDB", "PostgreSQL", "Jira", "Linear", "Figma", "Sketch", "Jenkins",
             "GitLab CI"],
    "role": ["junior analyst", "team lead", "night nurse", "charge nurse", "sous chef",
             "head chef", "staff engineer", "engineering manager"],
    "habit": ["running in the mornings", "swimming after work", "cycling to the office",
              "yoga on weekends", "rock climbing on Thursdays", "rowing at dawn"],
    "relationship": ["dating Elias", "engaged to Elias", "married to Elias", "seeing Corinne",
                     "living with Corinne", "single again"],
}

# The old statement (first session), said by the subject.
OLD: dict[str, list[str]] = {
    "job": ["I've been working at {old} for about three years now.",
            "Work at {old} is keeping me busy as usual."],
    "home": ["Our flat in {old} is tiny but I love the neighbourhood.",
             "I live in {old}, right by the river."],
    "tool": ["At work we keep everything in {old}, it does the job.",
             "Our team runs on {old} for pretty much everything."],
    "role": ["I'm a {old} on my ward, long shifts but good people.",
             "Being a {old} means a lot of meetings lately."],
    "habit": ["I keep up with {old}, it clears my head.",
              "My routine is {old}, rain or shine."],
    "relationship": ["I'm {old}, we met at a friend's barbecue.",
                     "Things are good, I'm {old} and we're happy."],
}

# The change (second session), by phrasing: plain, passing, other, reply.
# "other": said by the other speaker; "reply": the subject answers a question (the
# question is the turn before, by the other speaker).
NEW: dict[str, dict[str, list[str]]] = {
    "job": {
        "plain": ["I work at {new} now, I started in spring."],
        "passing": ["Leaving {old} for {new} was the right call, honestly the commute alone."],
        "other": ["So how are you finding {new}? Must be a change after {old}."],
        "reply": ["Nope, I'm at {new} these days, handed in my notice back in March."],
    },
    "home": {
        "plain": ["I live in {new} now, we moved over the summer."],
        "passing": ["Finally unpacked the last boxes here in {new}, took us ages."],
        "other": ["How's life in {new}? I bet you don't miss {old} one bit."],
        "reply": ["No, we're in {new} now, the lease in {old} ran out."],
    },
    "tool": {
        "plain": ["We use {new} now at work, the whole team switched."],
        "passing": ["Since we migrated from {old} to {new} my evenings are calmer."],
        "other": ["Your team moved to {new}, right? Everyone says it beats {old}."],
        "reply": ["Not anymore, we dropped it, it's all {new} since the autumn."],
    },
    "role": {
        "plain": ["I'm a {new} now, got the promotion last month."],
        "passing": ["Being {new} instead of {old} means I finally pick the rota."],
        "other": ["Congratulations on making {new}, you earned it."],
        "reply": ["Not anymore, I'm {new} since the reshuffle."],
    },
    "habit": {
        "plain": ["These days my thing is {new}, I gave up {old}."],
        "passing": ["My knee feels better since I swapped {old} for {new}."],
        "other": ["I saw you out {new} again, what happened to {old}?"],
        "reply": ["Not really, I'm into {new} now, my knee hated the old routine."],
    },
    "relationship": {
        "plain": ["Big news, I'm {new} now!"],
        "passing": ["After the wedding planning chaos, being {new} feels calm."],
        "other": ["I heard you're {new} now, that's lovely news."],
        "reply": ["Things changed, I'm {new} these days."],
    },
}
# The question the other speaker asks before a "reply" change.
ASK: dict[str, str] = {
    "job": "Are you still at {old}?",
    "home": "Still living in {old}?",
    "tool": "Is your team still on {old}?",
    "role": "Are you still a {old}?",
    "habit": "Still doing {old}?",
    "relationship": "Are you still {old_bare}?",
}
# The "now" question, about the subject.
QUERY: dict[str, list[str]] = {
    "job": ["Where does {name} work?", "Which company is {name} at?"],
    "home": ["Where does {name} live?", "Which city is {name} living in?"],
    "tool": ["What tool does {name}'s team use?", "What does {name}'s team run on?"],
    "role": ["What is {name}'s role?", "What position does {name} hold?"],
    "habit": ["What does {name} do for exercise?", "What is {name}'s exercise routine?"],
    "relationship": ["Who is {name} with?", "What is {name}'s relationship status?"],
}

# Small talk reusing the attribute's words, so that the padding competes.
FILLER: dict[str, list[str]] = {
    "job": ["Work has been hectic, the quarterly review is coming.",
            "My manager wants everyone back in the office twice a week.",
            "A colleague of mine brought cake to work today."],
    "home": ["The neighbours are redoing their kitchen, so much noise.",
             "We finally bought a proper sofa for the living room.",
             "The city is packed with tourists this month."],
    "tool": ["Our deploy broke twice this week, what a mess.",
             "The team argued for an hour about ticket labels.",
             "I wrote a script to tidy up the database backups."],
    "role": ["My shift pattern changed again this week.",
             "I had to train two new starters on the ward.",
             "Meetings take half my day these days."],
    "habit": ["I bought new trainers, the old ones fell apart.",
              "The weather has been great for being outside.",
              "My knee has been grumbling a bit."],
    "relationship": ["We went to a friend's wedding last weekend.",
                     "My mum keeps asking when we'll visit.",
                     "We cooked dinner together and it went fine."],
}
SMALL_TALK = ["Did you watch the match on Saturday?", "I'm so tired, the week flew by.",
              "Have you tried the new bakery on the corner?", "It rained all day here.",
              "My cousin is visiting next week.", "I started reading a mystery novel.",
              "The train was late again this morning.", "We should catch up properly soon.",
              "Haha, that sounds about right.", "Anyway, how are you doing?"]
REPLIES = ["Oh nice, tell me more.", "That sounds good.", "Ha, I know the feeling.",
           "Really? I had no idea.", "Fair enough.", "Glad to hear it."]

# Controls: a series that only adds. (class, first, second, query)
CONTROLS: list[tuple[str, str, str, str]] = [
    ("pet", "We have a dog called {a}, he's a menace.",
     "We adopted a cat as well, {b}, she rules the house.", "What pets does {name} have?"),
    ("hobby", "I've been learning pottery on Tuesdays.",
     "I picked up watercolour painting too, on Sundays.", "What hobbies does {name} have?"),
    ("language", "I speak Portuguese with my grandmother.",
     "I'm learning Japanese as well, slowly.", "What languages does {name} speak?"),
    ("instrument", "I play the cello in a small ensemble.",
     "I started on the piano too, just for fun.", "What instruments does {name} play?"),
    ("friend", "My friend {a} and I go to quiz nights.",
     "I made a new friend, {b}, at the climbing gym.", "Who are {name}'s friends?"),
    ("trip", "We spent a week in Crete in the spring.",
     "We also did a long weekend in Vienna later on.", "Where has {name} travelled?"),
    # Series that only add and say nothing of it (no "also", "another", "too"): the
    # members of a set-valued attribute named one session at a time.
    ("children", "My son {a} started at the village school last week.",
     "My daughter {b} started at the village school today, she was so proud.",
     "Who are {name}'s children?"),
    ("friends", "I had a long lunch with my friend {a} on Sunday.",
     "My friend {b} dragged me to a long lunch at the pier.", "Who are {name}'s friends?"),
    ("pets", "We adopted a kitten from the shelter, {a}.",
     "We adopted {b} from the shelter, the sweetest puppy.", "What pets does {name} have?"),
    ("languages", "I speak Portuguese with my grandmother every Sunday.",
     "I speak Japanese with the clients every Sunday call.",
     "What languages does {name} speak?"),
    ("visited", "Our holiday in Crete was wonderful, so much sun.",
     "Our holiday in Vienna was wonderful, so many cafes.", "Where has {name} been on holiday?"),
    ("hobbies", "I play Catan with the neighbours most Fridays.",
     "I play Dungeons and Dragons with the neighbours on Fridays now.",
     "What games does {name} play?"),
]
PET_NAMES = ["Biscuit", "Pepper", "Mochi", "Juniper", "Ziggy", "Clementine"]


def _split(identifier: str) -> str:
    return "tune" if int(hashlib.sha1(identifier.encode()).hexdigest(), 16) % 2 == 0 else "held-out"


def _months(rng: random.Random) -> tuple[str, str, str]:
    """Two session dates 3-9 months apart in 2023-2024, and a day between them."""
    year = rng.choice([2023, 2024])
    first = rng.randint(1, 3)
    gap = rng.randint(3, 9)
    second = first + gap
    year2, month2 = (year + (second - 1) // 12, (second - 1) % 12 + 1)
    between = first + gap // 2
    year3, month3 = (year + (between - 1) // 12, (between - 1) % 12 + 1)
    return (f"{year}-{first:02d}-{rng.randint(2, 26):02d}T{rng.randint(9, 20):02d}:00:00Z",
            f"{year2}-{month2:02d}-{rng.randint(2, 26):02d}T{rng.randint(9, 20):02d}:00:00Z",
            f"{year3}-{month3:02d}-15T00:00:00Z")


def _pad(rng: random.Random, attribute: str | None, count: int) -> list[str]:
    pool = SMALL_TALK + (FILLER[attribute] if attribute else [])
    return rng.sample(pool, count)


def _session(rng: random.Random, a: str, b: str, key: list[tuple[str, str]],
             attribute: str | None) -> tuple[list[dict[str, str]], int]:
    """Turns alternating b, a, ... with the key turns placed in the middle; returns the
    turns and the index of the last key turn."""
    before = _pad(rng, attribute, 3)
    after = _pad(rng, None, 3)
    turns: list[dict[str, str]] = []
    speakers = [b, a]
    for i, text in enumerate(before):
        turns.append({"speaker": speakers[i % 2], "text": text})
    for speaker, text in key:
        turns.append({"speaker": speaker, "text": text})
    at = len(turns) - 1
    for text in after:
        turns.append({"speaker": rng.choice([a, b]), "text": text})
    turns.insert(at + 1, {"speaker": b if turns[at]["speaker"] == a else a,
                          "text": rng.choice(REPLIES)})
    return turns, at


def scenarios(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for attribute, phrasings in NEW.items():
        for phrasing in phrasings:
            for copy in range(3):
                name, other = rng.sample(NAMES, 2)
                pool = VALUES[attribute]
                pair = rng.randrange(len(pool) // 2)
                old, new = pool[2 * pair], pool[2 * pair + 1]
                if rng.random() < 0.5 and attribute not in ("role", "relationship"):
                    old, new = new, old
                fill = {"old": old, "new": new,
                        "old_bare": old.replace("dating ", "with ").replace("seeing ", "with ")}
                first_at, second_at, between = _months(rng)
                old_text = rng.choice(OLD[attribute]).format(**fill)
                s1, old_index = _session(rng, name, other, [(name, old_text)], attribute)
                new_text = rng.choice(phrasings[phrasing]).format(**fill)
                if phrasing == "other":
                    key = [(other, new_text)]
                elif phrasing == "reply":
                    key = [(other, ASK[attribute].format(**fill)), (name, new_text)]
                else:
                    key = [(name, new_text)]
                s2, new_index = _session(rng, name, other, key, attribute)
                identifier = f"{attribute}:{phrasing}:{copy}"
                out.append(item(identifier, _split(identifier), [name, other],
                                [(first_at, s1), (second_at, s2)], (0, old_index),
                                (1, new_index), rng.choice(QUERY[attribute]).format(name=name),
                                between, now=new, then=old))
    return out


def controls(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed + 1)
    out: list[dict[str, Any]] = []
    for cls, first, second, query in CONTROLS:
        for copy in range(3):
            name, other = rng.sample(NAMES, 2)
            a, b = rng.sample(PET_NAMES, 2)
            first_at, second_at, between = _months(rng)
            s1, i1 = _session(rng, name, other, [(name, first.format(a=a, b=b))], None)
            s2, i2 = _session(rng, name, other, [(name, second.format(a=a, b=b))], None)
            identifier = f"control:{cls}:{copy}"
            out.append(item(identifier, _split(identifier), [name, other],
                            [(first_at, s1), (second_at, s2)], (0, i1), (1, i2),
                            query.format(name=name), between))
    return out


def item(identifier: str, split: str, speakers: list[str], sessions: list[tuple[str, Any]],
         old_turn: tuple[int, int], new_turn: tuple[int, int], query: str, as_of: str,
         **extra: Any) -> dict[str, Any]:
    """One scenario or control as both sets store it: ``sessions`` (date, turns), the
    session and index of the old and the new statement, the question and the day
    between (``as_of``); ``extra`` after those (a scenario's values, its phrasing)."""
    return {"id": identifier, "cls": identifier.rsplit(":", 1)[0], **extra.pop("head", {}),
            "split": split, "speakers": speakers,
            "sessions": [{"at": at, "turns": turns} for at, turns in sessions],
            "old_turn": list(old_turn), "new_turn": list(new_turn), "query": query,
            "as_of": as_of, **extra}


def write_set(doc: str | None, out: Path, seed: int,
              build: tuple[Any, Any]) -> None:
    """Write one set: ``build`` the (scenarios, controls) functions of a seed; the
    module's doc (from its third paragraph) says what the set holds."""
    scenario_items, control_items = build[0](seed), build[1](seed)
    data = {"about": (doc or "").split("\n\n", 2)[2].strip(), "seed": seed,
            "scenarios": scenario_items, "controls": control_items}
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    halves = {s: sum(x["split"] == s for x in scenario_items) for s in ("tune", "held-out")}
    print(f"{len(scenario_items)} scenarios {halves}, {len(control_items)} controls -> {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=31)
    args = parser.parse_args()
    write_set(__doc__, args.out, args.seed, (scenarios, controls))


if __name__ == "__main__":
    main()
