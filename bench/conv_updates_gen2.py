"""Generate the second conversational update set (tests/facts/conversational_updates2.json).

    python bench/conv_updates_gen2.py [--out tests/facts/conversational_updates2.json]

Written from classes before the turn links and the "now" stage were built (issue #31,
item 5), with none of the first set's sentences: the old statement is phrased four
ways too (plain, in passing, by the other speaker, as a reply), not only the new one;
three sessions (the middle one about other things), longer small talk that reuses the
attribute's words, and in half the scenarios a twin: the other speaker states their own
value of the same attribute ("I'm at Halden Foods myself"), so that the subject has to
be told apart. Nine attributes (the first set's six, and car, course of study, diet).
Controls: series that only add (another pet, sport, course, club, city visited, tool
added at work, a second job on the side) and restatements of the same value ("still at
Nordwind"): nothing may be linked as superseded, and a question about them is plural or
about the one value.

Split by a fixed hash of the id (sha1, even: "tune", odd: "held-out"), as the first set.
Deterministic: a fixed seed.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conv_updates_gen import NAMES, _split, item, write_set  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "facts" / "conversational_updates2.json"

VALUES: dict[str, list[str]] = {
    "job": ["Halden Foods", "Marlow Insurance", "Quillon Bank", "Ostrava Motors",
            "Pellwood Studios", "Arcadia Freight", "Kestrel Labs", "Lumen Dental"],
    "home": ["Ghent", "Valencia", "Halifax", "Lyon", "Aarhus", "Bilbao", "Dundee", "Graz"],
    "tool": ["Trello", "Asana", "Bitbucket", "GitHub", "Notion", "Confluence", "Slack",
             "Teams"],
    "role": ["staff engineer", "engineering manager", "sous chef", "head chef",
             "deputy head", "head teacher", "junior designer", "art director"],
    "habit": ["swimming laps at lunch", "lifting weights at the gym", "boxing classes",
              "long walks with the dog", "pilates twice a week", "trail running"],
    "relationship": ["seeing Marco", "engaged to Marco", "with Juno", "married to Juno",
                     "dating Tess", "single"],
    "car": ["an old Volvo", "a little Fiat", "a Tesla", "a Skoda estate", "a Mini",
            "a Kia hybrid"],
    "study": ["studying law", "studying nursing", "doing a chemistry degree",
              "doing a history degree", "training as an electrician",
              "training as a paramedic"],
    "diet": ["vegetarian", "vegan", "on a keto diet", "pescatarian", "eating everything",
             "off dairy"],
}

# The old statement (first session), by phrasing. "other": the other speaker says it to
# the subject; "reply": the subject answers the other's question (QUESTION below).
OLD: dict[str, dict[str, str]] = {
    "job": {"plain": "I'm with {old} these days, in the planning team.",
            "passing": "The canteen at {old} does a decent curry on Fridays.",
            "other": "How are things at {old}? You said the new boss was strict.",
            "reply": "Still {old}, same desk, same view of the car park."},
    "home": {"plain": "We rent a place in {old}, near the old harbour.",
             "passing": "The trams in {old} are always late, it drives me mad.",
             "other": "Is {old} still as rainy as you said? I remember your photos.",
             "reply": "{old}, we've been there for years now."},
    "tool": {"plain": "Our team tracks all the work in {old}.",
             "passing": "I spent the morning cleaning up old cards in {old}.",
             "other": "Does your team still love {old}? You were raving about it.",
             "reply": "We're on {old} for everything, tickets and docs."},
    "role": {"plain": "I'm the {old} there, it's a lot of responsibility.",
             "passing": "As {old} I get pulled into every budget meeting.",
             "other": "How's life as {old}? Sounds intense.",
             "reply": "I'm {old}, have been for a couple of years."},
    "habit": {"plain": "I do {old}, it keeps me sane.",
              "passing": "I was late because {old} ran over this morning.",
              "other": "Are you keeping up the {old}? You looked so fit.",
              "reply": "Mostly {old}, nothing fancy."},
    "relationship": {"plain": "I'm {old}, it's going really well.",
                     "passing": "Being {old} means my weekends are busy.",
                     "other": "How is it being {old}? You seem happy.",
                     "reply": "I'm {old}, since last year."},
    "car": {"plain": "I drive {old}, it gets me everywhere.",
            "passing": "Had to take {old} to the garage again, the brakes squeal.",
            "other": "Is {old} still running? It sounded rough last time.",
            "reply": "I've got {old}, nothing special."},
    "study": {"plain": "I'm {old} at the university, second year.",
              "passing": "Exams for {old} are brutal this term.",
              "other": "How's {old} going? Are the exams hard?",
              "reply": "I'm {old}, part time."},
    "diet": {"plain": "I'm {old}, have been for a while.",
             "passing": "Being {old} makes eating out a bit of a puzzle.",
             "other": "You're {old}, right? I'll plan the menu around it.",
             "reply": "I'm {old}, so anything works for me."},
}
# The question before an old "reply" (asked by the other speaker).
OLD_QUESTION: dict[str, str] = {
    "job": "Who are you working for at the moment?",
    "home": "Where are you based these days?",
    "tool": "What do you use to track work?",
    "role": "What's your job title now?",
    "habit": "What do you do to stay fit?",
    "relationship": "Are you seeing anyone?",
    "car": "What are you driving?",
    "study": "What are you studying?",
    "diet": "Any food I should avoid when you come over?",
}

# The change (third session), by phrasing.
NEW: dict[str, dict[str, str]] = {
    "job": {"plain": "I joined {new} in the summer, new badge and everything.",
            "passing": "My first month at {new} flew by, everyone is friendly.",
            "other": "So {new} hired you! When did you hand in your notice?",
            "reply": "Actually I'm at {new} now, the {old} job ended in May."},
    "home": {"plain": "We've settled in {new}, the new flat gets lots of light.",
             "passing": "Walking along the river in {new} every evening is lovely.",
             "other": "How are you liking {new}? The move looked exhausting.",
             "reply": "Nope, {new} since the spring, we left {old} behind."},
    "tool": {"plain": "We track everything in {new} now, the whole team moved.",
             "passing": "Half my day goes on tidying boards in {new} lately.",
             "other": "Your team is on {new} now, isn't it? How's that going?",
             "reply": "Not anymore, we went over to {new} in the autumn."},
    "role": {"plain": "I'm {new} now, they gave me the job in April.",
             "passing": "As {new} I finally get to set the priorities.",
             "other": "Well done on becoming {new}, that's huge!",
             "reply": "No, I'm {new} now, since the restructure."},
    "habit": {"plain": "I do {new} now, I stopped {old} after the injury.",
              "passing": "My back feels better with {new} than it ever did.",
              "other": "I keep seeing you at {new}, did you give up {old}?",
              "reply": "Not really, it's {new} for me these days."},
    "relationship": {"plain": "Guess what, I'm {new} now!",
                     "passing": "Being {new} has made this winter so much nicer.",
                     "other": "I heard you're {new}, congratulations!",
                     "reply": "Things moved on, I'm {new} now."},
    "car": {"plain": "I sold {old}, I drive {new} now.",
            "passing": "Parking {new} in town is so much easier.",
            "other": "Is that {new} outside yours? When did you get it?",
            "reply": "No, I swapped it for {new} in the winter."},
    "study": {"plain": "I switched courses, I'm {new} now.",
              "passing": "The labs for {new} take up every Thursday.",
              "other": "You're {new} now? What made you change?",
              "reply": "Not any more, I'm {new} since September."},
    "diet": {"plain": "I'm {new} now, I gave it a go and stuck with it.",
             "passing": "Being {new} has been easier than I expected.",
             "other": "You're {new} now? I'll adjust the recipe.",
             "reply": "Actually I'm {new} now, so no cheese for me."},
}
NEW_QUESTION: dict[str, str] = {
    "job": "Are you still with {old}?",
    "home": "Are you still in {old}?",
    "tool": "Still using {old} at work?",
    "role": "Are you still {old}?",
    "habit": "Still doing {old}?",
    "relationship": "Are you still {old}?",
    "car": "Still driving {old}?",
    "study": "Are you still {old}?",
    "diet": "Are you still {old}?",
}
# The twin: the other speaker's own value of the attribute.
TWIN: dict[str, str] = {
    "job": "I'm at {value} myself, it's fine.", "home": "I live out in {value} now.",
    "tool": "My team lives in {value}.", "role": "I'm {value} at my place.",
    "habit": "I've been into {value} lately.", "relationship": "I'm {value} myself.",
    "car": "I drive {value}, it's ancient.", "study": "I'm {value} at night school.",
    "diet": "I'm {value}, so I get it.",
}
QUERY: dict[str, list[str]] = {
    "job": ["Where does {name} work now?", "Who is {name}'s employer?"],
    "home": ["Where does {name} live now?", "What city is {name} based in?"],
    "tool": ["What does {name}'s team track work in?", "Which tool does {name}'s team use?"],
    "role": ["What is {name}'s job title?", "What role does {name} have now?"],
    "habit": ["How does {name} keep fit these days?", "What exercise does {name} do?"],
    "relationship": ["Who is {name} dating?", "Is {name} in a relationship?"],
    "car": ["What car does {name} drive?", "What does {name} drive now?"],
    "study": ["What is {name} studying?", "What course is {name} doing?"],
    "diet": ["What diet does {name} follow?", "Does {name} eat meat?"],
}
FILLER: dict[str, list[str]] = {
    "job": ["The office coffee machine broke again.", "Work is busy, deadlines everywhere.",
            "A colleague is leaving next month.", "We had a team lunch on Friday."],
    "home": ["The neighbours got a new puppy.", "The city council is digging up our road.",
             "Rent keeps going up everywhere.", "We repainted the hallway at last."],
    "tool": ["Our standup ran for forty minutes today.", "The team argued about labels.",
             "I wrote up the release notes.", "We lost a morning to a broken build."],
    "role": ["The reorg rumours are back.", "I sat through three meetings before lunch.",
             "My manager is on holiday.", "We hired two new people."],
    "habit": ["I bought new running socks.", "My legs are sore today.",
              "The weather was perfect for being outside.", "I slept badly last night."],
    "relationship": ["We went to a wedding last weekend.", "My sister is getting married.",
                     "We had dinner with friends.", "Mum keeps asking about Christmas."],
    "car": ["Petrol prices are silly.", "The roads were icy this morning.",
            "I got a parking ticket, unbelievable.", "Traffic was awful on the ring road."],
    "study": ["The library was packed today.", "I have an essay due Monday.",
              "My lecturer cancelled again.", "Group projects are the worst."],
    "diet": ["I tried a new recipe last night.", "The farmers market was great.",
             "I've been drinking more water.", "We ordered takeaway again."],
}
SMALL_TALK = ["Did you see the game at the weekend?", "I'm exhausted, long week.",
              "Have you been to the new cafe by the station?", "It's been pouring all day.",
              "My brother is visiting soon.", "I'm reading a great thriller.",
              "The bus was late again.", "We should get dinner soon.", "Ha, fair point.",
              "Anyway, what's new with you?", "I finally fixed the bike.",
              "The kids have a school play next week.", "I need a holiday.",
              "Did you watch that documentary?"]
REPLIES = ["Oh, nice.", "That's great to hear.", "Ha, same here.", "No way!", "Makes sense.",
           "Good for you.", "Tell me more sometime."]

# Controls: (class, first, second, query). {a}/{b}: two different names.
CONTROLS: list[tuple[str, str, str, str]] = [
    ("pet", "Our rabbit {a} chewed through a cable again.",
     "We got a kitten too, {b}, the rabbit is not impressed.", "What pets does {name} have?"),
    ("sport", "I play five-a-side football on Mondays.",
     "I've added tennis on Saturdays as well.", "What sports does {name} play?"),
    ("course", "I'm taking an evening class in Spanish.",
     "I signed up for a second class, photography, on Wednesdays.",
     "What classes is {name} taking?"),
    ("club", "I joined a book club at the library.",
     "I'm also in a choir now, we sing on Thursdays.", "What groups is {name} part of?"),
    ("visited", "We went to Lisbon for a long weekend.",
     "We also spent a few days in Krakow after that.", "Which cities has {name} visited?"),
    ("worktool", "At work we write everything up in Confluence.",
     "We added Slack as well for the quick questions.", "What tools does {name}'s team use?"),
    ("sidejob", "I work at Lumen Dental during the week.",
     "I also do weekend shifts at a bakery, for extra money.", "Where does {name} work?"),
    ("same", "I work at Kestrel Labs on the data team.",
     "Kestrel Labs is treating me well, I'm still on the data team.",
     "Where does {name} work?"),
    ("samehome", "We live in Aarhus, close to the beach.",
     "Aarhus is still home, we love it here.", "Where does {name} live?"),
    # Series that only add and say nothing of it (no "also", "another", "too").
    ("children", "Our eldest, {a}, is learning to ride a bike.",
     "Our youngest, {b}, learned to ride a bike at the weekend.",
     "How many kids does {name} have?"),
    ("friends", "Went climbing with my buddy {a} on Saturday, great day.",
     "Went climbing with {b}, a buddy from work, on Saturday.",
     "Who does {name} go climbing with?"),
    ("pets", "Our dog {a} stole a sandwich off the table.",
     "{b}, our other dog, stole a sandwich this time.", "What dogs does {name} have?"),
    ("languages", "My Italian is getting decent, I practise every day.",
     "My Korean is getting decent, I practise every day with an app.",
     "What languages is {name} learning?"),
    ("visited", "We visited Seville in March, the heat was something.",
     "We visited Tromso in December, the northern lights were unreal.",
     "Which places has {name} visited?"),
    ("siblings", "My sister {a} lives near the coast.",
     "My sister {b} moved near the coast last month.", "Who are {name}'s sisters?"),
]
PET_NAMES = ["Biscuit", "Pepper", "Mochi", "Juniper", "Ziggy", "Clementine", "Nutmeg", "Olive"]


def _dates(rng: random.Random) -> tuple[list[str], str]:
    """Three session dates, 2-5 months apart, and a day between the second and third."""
    year, month = rng.choice([2022, 2023, 2024]), rng.randint(1, 4)
    out, between = [], ""
    for number in range(3):
        if number:
            gap = rng.randint(2, 5)
            if number == 2:
                half = month + gap // 2
                between = f"{year + (half - 1) // 12}-{(half - 1) % 12 + 1:02d}-15T00:00:00Z"
            month += gap
        out.append(f"{year + (month - 1) // 12}-{(month - 1) % 12 + 1:02d}-"
                   f"{rng.randint(2, 26):02d}T{rng.randint(8, 21):02d}:00:00Z")
    return out, between


def _session(rng: random.Random, a: str, b: str, key: list[tuple[str, str]],
             pool: list[str], length: int) -> tuple[list[dict[str, str]], int]:
    """``length`` padding turns alternating b, a with the key turns in the middle (and
    a reply after them); returns the turns and the index of the last key turn."""
    pad = rng.sample(pool, length)
    half = length // 2
    turns = [{"speaker": (b, a)[i % 2], "text": text} for i, text in enumerate(pad[:half])]
    turns += [{"speaker": s, "text": t} for s, t in key]
    at = len(turns) - 1
    turns.append({"speaker": b if turns[at]["speaker"] == a else a,
                  "text": rng.choice(REPLIES)})
    turns += [{"speaker": (a, b)[i % 2], "text": text} for i, text in enumerate(pad[half:])]
    return turns, at


def _key(phrasing: str, text: str, question: str, name: str, other: str
         ) -> list[tuple[str, str]]:
    if phrasing == "other":
        return [(other, text)]
    if phrasing == "reply":
        return [(other, question), (name, text)]
    return [(name, text)]


def scenarios(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    phrasings = ["plain", "passing", "other", "reply"]
    for attribute in NEW:
        for number, new_phrasing in enumerate(phrasings):
            for copy in range(2):
                old_phrasing = phrasings[(number + 1 + copy) % 4]
                name, other = rng.sample(NAMES, 2)
                pool = VALUES[attribute]
                old, new, twin = rng.sample(pool, 3)
                fill = {"old": old, "new": new}
                dates, between = _dates(rng)
                twin_at = rng.choice([0, 1]) if copy == 0 else None
                length = rng.randint(8, 12)
                talk = SMALL_TALK + FILLER[attribute]
                key0 = _key(old_phrasing, OLD[attribute][old_phrasing].format(**fill),
                            OLD_QUESTION[attribute], name, other)
                if twin_at == 0:
                    key0 = [*key0, (other, TWIN[attribute].format(value=twin))]
                s1, old_index = _session(rng, name, other, key0, talk, length)
                if twin_at == 0:
                    old_index -= 1
                mid_key = ([(other, TWIN[attribute].format(value=twin))] if twin_at == 1
                           else [(rng.choice([name, other]), rng.choice(SMALL_TALK))])
                s2, _ = _session(rng, name, other, mid_key, SMALL_TALK, length)
                key2 = _key(new_phrasing, NEW[attribute][new_phrasing].format(**fill),
                            NEW_QUESTION[attribute].format(**fill), name, other)
                s3, new_index = _session(rng, name, other, key2, talk, length)
                identifier = f"{attribute}:{new_phrasing}:{copy}"
                out.append(item(identifier, _split("v2:" + identifier), [name, other],
                                list(zip(dates, (s1, s2, s3), strict=True)), (0, old_index),
                                (2, new_index), rng.choice(QUERY[attribute]).format(name=name),
                                between, now=new, then=old,
                                head={"old_phrasing": old_phrasing,
                                      "twin": twin_at is not None}))
    return out


def controls(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed + 1)
    out: list[dict[str, Any]] = []
    for cls, first, second, query in CONTROLS:
        for copy in range(3):
            name, other = rng.sample(NAMES, 2)
            a, b = rng.sample(PET_NAMES, 2)
            dates, between = _dates(rng)
            length = rng.randint(8, 12)
            s1, i1 = _session(rng, name, other, [(name, first.format(a=a, b=b))],
                              SMALL_TALK, length)
            s2, _ = _session(rng, name, other, [(other, rng.choice(SMALL_TALK))],
                             SMALL_TALK, length)
            s3, i3 = _session(rng, name, other, [(name, second.format(a=a, b=b))],
                              SMALL_TALK, length)
            identifier = f"control:{cls}:{copy}"
            out.append(item(identifier, _split("v2:" + identifier), [name, other],
                            list(zip(dates, (s1, s2, s3), strict=True)), (0, i1), (2, i3),
                            query.format(name=name), between))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=3105)
    args = parser.parse_args()
    write_set(__doc__, args.out, args.seed, (scenarios, controls))


if __name__ == "__main__":
    main()
