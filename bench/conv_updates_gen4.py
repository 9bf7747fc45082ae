"""Generate the fourth conversational update set (tests/facts/conversational_updates4.json).

    python bench/conv_updates_gen4.py [--out tests/facts/conversational_updates4.json]

Written from classes for the other speaker (issue #31, item 5, round 9), after
``TurnTuning.asked`` was built on the third set and before it was scored here, with
none of the first three sets' sentences. What it holds: the person states a value in
the first session; in the last one the OTHER speaker says the new value to them, in
three forms: a question without "you" ("How's the new flat in Porto?"), a check with
"you" ("So you're at Brightleaf now?"), and a remark ("Saw the Skoda outside, nice
upgrade."). Named values only (job, home, tool, car, team): the path that links names.

Controls: the other speaker asks about one more member of a set (a second pet, child,
friend, city visited, class), in the same three forms; none may be linked.

Split by a fixed hash of the id (sha1 of "v4:" and the id; even: "tune", odd:
"held-out"), as the other sets. Deterministic: a fixed seed.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conv_updates_gen import NAMES, _split, item, write_set  # noqa: E402
from conv_updates_gen2 import SMALL_TALK, _dates, _session  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "facts" / "conversational_updates4.json"

VALUES: dict[str, list[str]] = {
    "job": ["Halloran Freight", "Quayside Bank", "Mirefield Games", "Ostrander Foods",
            "Pellucid Optics", "Garrow Insurance"],
    "home": ["Porto", "Ghent", "Aarhus", "Lyon", "Krakow", "Galway"],
    "tool": ["Postgres", "MongoDB", "Elasticsearch", "ClickHouse", "Firestore", "Neo4j"],
    "car": ["Skoda Octavia", "Mazda MX-5", "Ford Fiesta", "Kia Niro", "Fiat Panda",
            "Subaru Outback"],
    "team": ["Hibernian", "Celtic", "Wolves", "Everton", "Brentford", "Fulham"],
}
OLD: dict[str, str] = {
    "job": "I'm a buyer at {old}, mostly spreadsheets.",
    "home": "Our place in {old} has a balcony over the square.",
    "tool": "Everything we log goes into {old}.",
    "car": "My {old} has done two hundred thousand miles.",
    "team": "I've had a season ticket for {old} since I was ten.",
}
# The other speaker's new statement, by form.
NEW: dict[str, dict[str, str]] = {
    "job": {"bare": "How's the buying job at {new} going?",
            "you": "So you're at {new} now?",
            "remark": "Saw your name on the {new} website, fancy!"},
    "home": {"bare": "How's the new flat in {new}? Settled?",
             "you": "So you live in {new} these days?",
             "remark": "Heard the move to {new} went smoothly."},
    "tool": {"bare": "How's the logging on {new} holding up?",
             "you": "So your team runs on {new} now?",
             "remark": "Heard the switch to {new} was painless."},
    "car": {"bare": "Is the {new} good on motorways?",
            "you": "So you drive a {new} now?",
            "remark": "Saw the {new} outside, nice upgrade."},
    "team": {"bare": "How's the season ticket at {new} going?",
             "you": "So you support {new} now? Traitor!",
             "remark": "Heard the season ticket is for {new} these days."},
}
QUERY: dict[str, str] = {
    "job": "Where does {name} work now?", "home": "Which city does {name} live in?",
    "tool": "Which database does {name}'s team log to?", "car": "What car does {name} drive?",
    "team": "Which football team does {name} support?",
}
PAST: dict[str, str] = {
    "job": "Where did {name} work before?", "home": "Where did {name} live before?",
    "tool": "Where did {name}'s team log before?", "car": "What car did {name} drive before?",
    "team": "Which team did {name} support before?",
}

# Controls: (class, first said by the person, the other speaker's three forms, query).
CONTROLS: list[tuple[str, str, dict[str, str], str]] = [
    ("pets", "Our cat {a} sleeps on the radiator all day.",
     {"bare": "How's the new puppy {b} getting on?", "you": "So you got a puppy, {b}?",
      "remark": "Heard {b} the puppy chewed a shoe already."},
     "What pets does {name} have?"),
    ("children", "{a} has just started at primary school.",
     {"bare": "How's baby {b} sleeping?", "you": "So you had the baby, little {b}?",
      "remark": "Heard baby {b} arrived last week, congratulations."},
     "What are {name}'s children called?"),
    ("friends", "My friend {a} and I go running on Saturdays.",
     {"bare": "Is {b} joining the Saturday runs as well?",
      "you": "So you made a new running friend, {b}?",
      "remark": "Heard {b} is running with you lot on Saturdays."},
     "Who does {name} run with?"),
    ("cities", "We had a long weekend in Seville, the tiles were stunning.",
     {"bare": "How was the trip to Bruges?", "you": "So you went to Bruges after Seville?",
      "remark": "Saw the photos from Bruges, gorgeous trip."},
     "Which cities has {name} visited?"),
]
FORMS = ["bare", "you", "remark"]
PETS = ["Miso", "Pickle", "Juniper", "Biscuit", "Pepper", "Nutmeg", "Olive", "Clover"]


def scenarios(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for attribute, forms in NEW.items():
        for form in FORMS:
            for copy in range(2):
                name, other = rng.sample(NAMES, 2)
                old, new = rng.sample(VALUES[attribute], 2)
                dates, between = _dates(rng)
                length = rng.randint(8, 12)
                s1, old_index = _session(rng, name, other,
                                         [(name, OLD[attribute].format(old=old))],
                                         SMALL_TALK, length)
                s2, _ = _session(rng, name, other, [(other, rng.choice(SMALL_TALK))],
                                 SMALL_TALK, length)
                s3, new_index = _session(rng, name, other,
                                         [(other, forms[form].format(new=new))],
                                         SMALL_TALK, length)
                identifier = f"{attribute}:{form}:{copy}"
                out.append(item(identifier, _split("v4:" + identifier), [name, other],
                                list(zip(dates, (s1, s2, s3), strict=True)), (0, old_index),
                                (2, new_index), QUERY[attribute].format(name=name),
                                between, now=new, then=old,
                                past_query=PAST[attribute].format(name=name),
                                head={"old_phrasing": "plain"}))
    return out


def controls(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed + 1)
    out: list[dict[str, Any]] = []
    for cls, first, forms, query in CONTROLS:
        for form in FORMS:
            name, other = rng.sample(NAMES, 2)
            a, b = rng.sample(PETS, 2)
            dates, between = _dates(rng)
            length = rng.randint(8, 12)
            s1, i1 = _session(rng, name, other, [(name, first.format(a=a))], SMALL_TALK,
                              length)
            s2, _ = _session(rng, name, other, [(other, rng.choice(SMALL_TALK))],
                             SMALL_TALK, length)
            s3, i3 = _session(rng, name, other, [(other, forms[form].format(b=b))],
                              SMALL_TALK, length)
            identifier = f"control:{cls}:{form}"
            out.append(item(identifier, _split("v4:" + identifier), [name, other],
                            list(zip(dates, (s1, s2, s3), strict=True)), (0, i1), (2, i3),
                            query.format(name=name), between))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=3109)
    args = parser.parse_args()
    write_set(__doc__, args.out, args.seed, (scenarios, controls))


if __name__ == "__main__":
    main()
