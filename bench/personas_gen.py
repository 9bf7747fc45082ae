"""Generate the persona conversations (bench/data/personas.json), a second conversation
benchmark in LOCOMO's format, from a different source than LOCOMO.

    python bench/personas_gen.py [--conversations 10] [--seed 31] [--out bench/data/personas.json]

Written for issue #31 before any recall stage was tuned, so that a change must hold on
two benchmarks. Scripted personas chat in sessions weeks apart over most of a year; the
facts they mention are drawn from classes (family, pets, trips, work projects, hobbies,
tastes, events with friends, purchases) and said the way people say them (in passing,
with a pronoun, as a reply, with a relative date). Each persona's own facts have twins
for the other persona (the same classes, other values), and small talk reuses the
classes' words, so questions must find the right speaker's turn. Questions, in LOCOMO's
categories: single-hop (4: one turn answers, asked in other words), temporal (2: "when"
questions answered by a dated turn), multi-hop (1: the answer joins two turns of different
sessions, e.g. a relative named in one session and what she did in another), open-domain
(3: an inference from a stated taste, sharing few words with it). Evidence ids are
``D<session>:<turn>`` as in LOCOMO, so bench/locomo.py and bench/locomo_cv.py read it.
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "data" / "personas.json"

FIRST = ["Ayesha", "Bruno", "Catalina", "Desmond", "Elif", "Florian", "Greta", "Hamid",
         "Isolde", "Jasper", "Keiko", "Lorcan", "Mireille", "Nikolai", "Odalys", "Pavel",
         "Quentin", "Rhiannon", "Soren", "Tamsin", "Ulrich", "Valentina", "Wendell", "Xiomara"]
RELATIVES = [("sister", "her"), ("brother", "his"), ("cousin", "their"), ("aunt", "her"),
             ("nephew", "his")]
KIN_NAMES = ["Noor", "Idris", "Saoirse", "Matteo", "Linnea", "Oisin", "Zara", "Benedikt"]
STUDIES = [("architecture", "buildings"), ("marine biology", "the ocean"),
           ("law", "courtrooms"), ("nursing", "hospitals"), ("film", "cinema"),
           ("geology", "rocks")]
PETS = [("a rescue greyhound", "dog", "Comet"), ("a grey rabbit", "rabbit", "Thistle"),
        ("two goldfish", "fish", "Bubbles"), ("a tabby kitten", "cat", "Saffron"),
        ("a cockatiel", "bird", "Kiwi"), ("a tortoise", "tortoise", "Sheldon")]
TRIPS = [("Lisbon", "the tiled houses"), ("Reykjavik", "the hot springs"),
         ("Kyoto", "the temples"), ("Marrakesh", "the markets"), ("Edinburgh", "the castle"),
         ("Tallinn", "the old town walls"), ("Cape Town", "the cable car"),
         ("Oaxaca", "the mole sauces")]
PROJECTS = [("a booking app for a chain of dentists", "dental appointments software"),
            ("a dashboard for wind farm turbines", "monitoring screens for renewable power"),
            ("a recommendation engine for a bookshop", "suggesting novels to customers"),
            ("payroll software for a hospital", "paying medical staff"),
            ("a ticketing system for a football club", "selling seats at the stadium"),
            ("a route planner for delivery vans", "planning courier journeys")]
# (what the persona says, a question answered by inference, sharing few words with it)
TASTES = [
    ("Honestly nothing beats a thunderstorm at night with a blanket and a mug of cocoa.",
     "Would {name} rather stay in on a wild evening or go clubbing?"),
    ("I could spend every Saturday wandering galleries and sketching the statues.",
     "Would {name} enjoy a trip to an art museum?"),
    ("My ideal weekend is a tent, a campfire and zero phone signal.",
     "Is {name} the outdoorsy type?"),
    ("Spicy food is my weakness, the hotter the better, chillies on everything.",
     "Would {name} like a fiery curry?"),
    ("Crowds drain me, I'd take a quiet corner with two friends over a big party any day.",
     "Is {name} more introverted or extroverted?"),
    ("I've read every detective novel in the library twice over.",
     "What genre of book would make a good present for {name}?"),
    ("I get seasick just looking at a ferry, boats are not for me.",
     "Would {name} sign up for a sailing cruise?"),
    ("Mornings are my favourite, up at five with the birds and a black coffee.",
     "Is {name} an early riser?"),
    ("I volunteer at the animal shelter whenever I can, walking the old dogs.",
     "Does {name} care about animal welfare?"),
    ("Give me a spreadsheet and a messy budget and I'm happy for hours.",
     "Would {name} enjoy working as an accountant?"),
]
HOBBIES = [("bouldering", "at the climbing wall", "What sport has {name} taken up?"),
           ("sourdough baking", "my starter is called Gerald", "What does {name} bake?"),
           ("birdwatching", "spotted a kingfisher by the canal", "What is {name}'s pastime?"),
           ("learning the ukulele", "my fingers hurt from the strings",
            "Which instrument is {name} learning?"),
           ("salsa classes", "my feet are always sore after",
            "What kind of dancing does {name} do?"),
           ("growing tomatoes", "the balcony is a jungle now",
            "What is {name} growing at home?")]
PURCHASES = [("a second-hand piano", "music"), ("an electric bike", "commuting"),
             ("a vintage typewriter", "writing"), ("a telescope", "stargazing"),
             ("a sewing machine", "making clothes"), ("a kayak", "the river")]
EVENTS = [("the city half marathon", "ran"), ("a charity quiz night", "won"),
          ("a pottery workshop", "went to"), ("a jazz festival", "went to"),
          ("a food fair", "had a stall at"), ("a chess tournament", "played in")]
SMALL_TALK = [
    "How has your week been?", "Same old, busy but fine.", "The weather has been all over "
    "the place.", "I need a holiday, honestly.", "Did you see the news about the bridge?",
    "I've been sleeping badly, too much coffee probably.", "We should grab lunch soon.",
    "Haha, classic.", "That's so good to hear!", "Oh no, that sounds stressful.",
    "I finished that series you recommended, loved it.", "Work is work, you know.",
    "My phone screen cracked again.", "I'm trying to cook more at home.",
    "It's been ages since we talked properly.", "Traffic was awful this morning.",
    "I tried a new cafe near the station, decent flat white.", "Any plans for the weekend?",
    "Not much, maybe a walk if it stays dry.", "Wow, I didn't know that.",
    "I'm so proud of you!", "Tell me everything.", "That reminds me, I owe you a call.",
    "The neighbours' dog barks all night.", "I bought too many plants again.",
    "My family keeps asking about the holidays.", "I've been thinking about a trip.",
    "Work sent us on a training day, pretty useless.",
]
REACTIONS = ["Oh wow, nice!", "That sounds amazing.", "No way, really?", "Love that.",
             "Good for you!", "Ha, I can picture it.", "How fun!", "That's brilliant."]
RELATIVE_DAYS = [("yesterday", 1), ("last weekend", 7), ("last week", 7),
                 ("a couple of days ago", 2), ("two weeks ago", 14)]


def _date_text(at: datetime) -> str:
    hour = at.hour % 12 or 12
    return f"{hour}:{at.minute:02d} {'am' if at.hour < 12 else 'pm'} on {at.day} " \
           f"{at.strftime('%B')}, {at.year}"


class Builder:
    """One conversation: sessions of turns, facts planted, questions with evidence."""

    def __init__(self, rng: random.Random, a: str, b: str, start: datetime) -> None:
        self.rng = rng
        self.a, self.b = a, b
        self.sessions: list[list[dict[str, str]]] = []
        self.dates: list[datetime] = []
        at = start
        for _ in range(8):
            self.sessions.append([])
            self.dates.append(at)
            at += timedelta(days=rng.randint(21, 45), hours=rng.randint(-3, 3))
        self.plan: list[list[tuple[str, str, str | None]]] = [[] for _ in self.sessions]
        self.qa: list[dict[str, Any]] = []
        self.pending: list[tuple[dict[str, Any], list[tuple[int, int]]]] = []

    def plant(self, session: int, speaker: str, text: str, reply: str | None = None) -> int:
        """Queue a fact turn (and the other's reply); returns its index in the plan."""
        self.plan[session].append((speaker, text, reply))
        return len(self.plan[session]) - 1

    def ask(self, question: str, answer: str, category: int,
            refs: list[tuple[int, int]]) -> None:
        self.pending.append(({"question": question, "answer": answer, "category": category},
                             refs))

    def build(self) -> dict[str, Any]:
        rng = self.rng
        where: dict[tuple[int, int], str] = {}
        for number, planned in enumerate(self.plan):
            turns = self.sessions[number]
            talk = rng.sample(SMALL_TALK, 4 + len(planned))
            speakers = [self.a, self.b]
            slots = sorted(rng.sample(range(1, len(talk)), min(len(planned), len(talk) - 1)))
            slots += [len(talk)] * (len(planned) - len(slots))
            fact = 0
            for i, text in enumerate(talk + [""]):
                while fact < len(planned) and slots[fact] == i:
                    speaker, fact_text, reply = planned[fact]
                    turns.append({"speaker": speaker, "text": fact_text})
                    where[(number, fact)] = f"D{number + 1}:{len(turns)}"
                    other = self.b if speaker == self.a else self.a
                    turns.append({"speaker": other, "text": reply or rng.choice(REACTIONS)})
                    fact += 1
                if text:
                    turns.append({"speaker": speakers[len(turns) % 2], "text": text})
        for entry, refs in self.pending:
            entry["evidence"] = [where[r] for r in refs]
            self.qa.append(entry)
        conversation: dict[str, Any] = {"speaker_a": self.a, "speaker_b": self.b}
        for number, turns in enumerate(self.sessions, 1):
            for i, turn in enumerate(turns, 1):
                turn["dia_id"] = f"D{number}:{i}"
            conversation[f"session_{number}"] = turns
            conversation[f"session_{number}_date_time"] = _date_text(self.dates[number - 1])
        return {"conversation": conversation, "qa": self.qa}


def persona_facts(bld: Builder, name: str, other: str, picks: dict[str, Any]) -> None:
    """Plant one persona's facts and ask about them (the other persona gets twins)."""
    rng = bld.rng
    order = rng.sample(range(8), 8)
    # multi-hop: a relative named in one session, what they did in a later one
    relation, _pronoun = picks["relative"]
    kin = picks["kin"]
    study, field = picks["study"]
    s1, s2 = sorted(order[:2])
    r1 = bld.plant(s1, name, f"My {relation} {kin} is staying with us for a bit, chaos.")
    r2 = bld.plant(s2, name, f"{kin} got a place on the {study} course, we're thrilled!")
    bld.ask(f"What is {name}'s {relation} going to study?", study, 1, [(s1, r1), (s2, r2)])
    bld.ask(f"Who is {name}'s {relation}?", kin, 4, [(s1, r1)])
    # pet (single-hop, asked in other words)
    desc, kind, pet = picks["pet"]
    s = order[2]
    r = bld.plant(s, name, f"We brought home {desc} on Sunday, named {pet}.",
                  f"Aww, {pet} is such a good name!")
    bld.ask(f"What animal did {name} adopt?", kind, 4, [(s, r)])
    # trips: temporal and multi-hop
    (city1, sight1), (city2, sight2) = picks["trips"]
    t1, t2 = sorted(order[3:5])
    when, days = rng.choice(RELATIVE_DAYS)
    r1 = bld.plant(t1, name, f"Got back from {city1} {when}, {sight1} were unreal.")
    r2 = bld.plant(t2, name, f"Spent a few days in {city2}, {sight2} alone were worth it.")
    answer = (bld.dates[t1] - timedelta(days=days)).strftime("%B %Y")
    bld.ask(f"When did {name} go to {city1}?", answer, 2, [(t1, r1)])
    bld.ask(f"Which cities has {name} travelled to?", f"{city1}, {city2}", 1,
            [(t1, r1), (t2, r2)])
    # work project (single-hop in other words)
    project, paraphrase = picks["project"]
    s = order[5]
    r = bld.plant(s, name, f"At work I'm stuck building {project}, deadline is brutal.")
    bld.ask(f"What is {name} developing for their job?", paraphrase, 4, [(s, r)])
    # hobby (single-hop) and an event (temporal)
    hobby, detail, question = picks["hobby"]
    s = order[6]
    r = bld.plant(s, name, f"I've got really into {hobby} lately, {detail}.")
    bld.ask(question.format(name=name), hobby, 4, [(s, r)])
    event, verb = picks["event"]
    s = order[7]
    when, days = rng.choice(RELATIVE_DAYS)
    r = bld.plant(s, name, f"I {verb} {event} {when}, what a day.",
                  "Wait, how did it go?")
    answer = (bld.dates[s] - timedelta(days=days)).strftime("%d %B %Y")
    bld.ask(f"When did {name} take part in {event}?", answer, 2, [(s, r)])
    # purchase (single-hop, asked by its use)
    item, use = picks["purchase"]
    s = order[rng.randrange(8)]
    r = bld.plant(s, name, f"Treated myself to {item}, no regrets.", "Ooh, show me sometime!")
    bld.ask(f"What did {name} buy for {use}?", item, 4, [(s, r)])
    # tastes (open-domain: inference)
    for taste, question in picks["tastes"]:
        s = order[rng.randrange(8)]
        r = bld.plant(s, name, taste)
        bld.ask(question.format(name=name), "yes / inferred", 3, [(s, r)])
    del other


def conversation(rng: random.Random, index: int) -> dict[str, Any]:
    a, b = rng.sample(FIRST, 2)
    start = datetime(rng.choice([2022, 2023]), rng.randint(1, 5), rng.randint(1, 27),
                     rng.randint(9, 20), rng.choice([0, 15, 30, 45]))
    bld = Builder(rng, a, b, start)
    relatives = rng.sample(RELATIVES, 2)
    kins = rng.sample(KIN_NAMES, 2)
    studies = rng.sample(STUDIES, 2)
    pets = rng.sample(PETS, 2)
    trips = rng.sample(TRIPS, 4)
    projects = rng.sample(PROJECTS, 2)
    hobbies = rng.sample(HOBBIES, 2)
    events = rng.sample(EVENTS, 2)
    purchases = rng.sample(PURCHASES, 2)
    tastes = rng.sample(TASTES, 6)
    for who, (name, other) in enumerate([(a, b), (b, a)]):
        persona_facts(bld, name, other, {
            "relative": relatives[who], "kin": kins[who], "study": studies[who],
            "pet": pets[who], "trips": trips[2 * who: 2 * who + 2], "project": projects[who],
            "hobby": hobbies[who], "event": events[who], "purchase": purchases[who],
            "tastes": tastes[3 * who: 3 * who + 3],
        })
    return {"sample_id": f"persona-{index}", **bld.build()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    samples = [conversation(rng, i) for i in range(args.conversations)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(samples, indent=1, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    turns = sum(len(v) for s in samples for k, v in s["conversation"].items()
                if k.startswith("session_") and not k.endswith("date_time"))
    print(f"{len(samples)} conversations, {turns} turns, "
          f"{sum(len(s['qa']) for s in samples)} questions -> {args.out}")


if __name__ == "__main__":
    main()
