"""Generate the third conversational update set (tests/facts/conversational_updates3.json).

    python bench/conv_updates_gen3.py [--out tests/facts/conversational_updates3.json]

Written from classes before the latest-statement stage was built (issue #31, item 5,
round 8), with none of the first two sets' sentences. What it adds: the change stated
as a change, naming the new value and often the old one in one turn ("leaving X for Y",
"since we moved from X to Y", "the last boxes are unpacked in Y"), or naming only the new
one with the frame of the change left to the reader; every scenario also asks a question
in the past tense ("Where did Ana work before?"), whose answer is the old statement and
which no stage may reorder towards the newer one.

Nine attributes (job, home, tool, role, habit, relationship, car, study, diet) x four
phrasings of the new statement (plain, in passing, by the other speaker, as a reply) x
two, each old statement phrased another of the four ways; three sessions 2-5 months
apart (the middle one small talk); padding from bench/conv_updates_gen2.py's small talk.
Controls: series that only add, said without "also", "another" or "too" (a second child,
another climbing partner, a second dog, another language, another city visited, another
instrument), and restatements of the same value; none may be linked or reordered.

Split by a fixed hash of the id (sha1 of "v3:" and the id; even: "tune", odd:
"held-out"), as the first two sets. Deterministic: a fixed seed.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conv_updates_gen import NAMES, _split, item, write_set  # noqa: E402
from conv_updates_gen2 import SMALL_TALK, _dates, _key, _session  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "facts" / "conversational_updates3.json"

VALUES: dict[str, list[str]] = {
    "job": ["Fernhill Energy", "Calder Pharma", "Brisk Couriers", "Northgate Council",
            "Ambrose Hotels", "Tidewater Labs", "Orchard Retail", "Vantor Systems"],
    "home": ["Utrecht", "Nantes", "Cork", "Tartu", "Malmo", "Trieste", "Bergen", "Leipzig"],
    "tool": ["MySQL", "Cassandra", "Redis", "SQLite", "Oracle", "DynamoDB", "Snowflake",
             "BigQuery"],
    "role": ["shift supervisor", "store manager", "line cook", "kitchen manager",
             "lab technician", "research lead", "trainee solicitor", "associate solicitor"],
    "habit": ["cycling to work", "rowing at the club", "yoga before breakfast",
              "spin classes", "evening runs", "hiking every Sunday"],
    "relationship": ["going out with Ruben", "engaged to Ruben", "seeing Dana",
                     "married to Dana", "living with Kit", "single again"],
    "car": ["a Honda Jazz", "a Peugeot van", "a Volkswagen Golf", "a Nissan Leaf",
            "a Renault Clio", "a Toyota Prius"],
    "study": ["a degree in geology", "a degree in economics", "an MBA", "a coding bootcamp",
              "a nursing diploma", "an apprenticeship in plumbing"],
    "diet": ["vegetarian", "vegan", "gluten free", "on a low carb diet", "eating meat again",
             "pescatarian"],
}

# The old statement (first session), by phrasing: "other" is said to the subject,
# "reply" answers OLD_QUESTION.
OLD: dict[str, dict[str, str]] = {
    "job": {"plain": "I've been at {old} for three years now.",
            "passing": "Parking at {old} is a nightmare, I get in at seven to find a spot.",
            "other": "Did {old} ever sort out your pay rise?",
            "reply": "{old}, in the finance office."},
    "home": {"plain": "Our flat in {old} is tiny but we love it.",
             "passing": "The ferry from {old} was packed this morning.",
             "other": "Is it true {old} has the best bakeries? You keep posting them.",
             "reply": "{old}, right by the river."},
    "tool": {"plain": "Our whole backend runs on {old}.",
             "passing": "I lost the afternoon to a {old} backup that would not finish.",
             "other": "Are your services still happy on {old}?",
             "reply": "{old}, for pretty much everything we store."},
    "role": {"plain": "I work as {old} at the moment.",
             "passing": "Being {old} means I do all the rotas.",
             "other": "How is it going as {old}? Sounds busy.",
             "reply": "I'm {old} there."},
    "habit": {"plain": "My exercise is {old}, every week without fail.",
              "passing": "My knees hate me after {old} this morning.",
              "other": "Are you still mad about {old}?",
              "reply": "Mostly {old}."},
    "relationship": {"plain": "I'm {old}, we met at a wedding.",
                     "passing": "Being {old} means every holiday is planned twice.",
                     "other": "How are things with you, {old} and all?",
                     "reply": "I'm {old}, it's lovely."},
    "car": {"plain": "I drive {old}, it does the job.",
            "passing": "{old} failed its inspection, typical.",
            "other": "Is {old} still making that noise?",
            "reply": "{old}, it's ancient."},
    "study": {"plain": "I'm doing {old} part-time.",
              "passing": "Exams for {old} are in May, wish me luck.",
              "other": "How is {old} going? You looked swamped.",
              "reply": "{old}, second year."},
    "diet": {"plain": "I'm {old}, have been since uni.",
             "passing": "Being {old} makes work dinners awkward.",
             "other": "Are you still {old}? I'll book somewhere that suits.",
             "reply": "I'm {old}, mostly."},
}
OLD_QUESTION: dict[str, str] = {
    "job": "Where are you working these days?", "home": "Where are you living now?",
    "tool": "What database are you on?", "role": "What's your job there?",
    "habit": "How do you keep fit?", "relationship": "Are you seeing anyone?",
    "car": "What are you driving?", "study": "What are you studying?",
    "diet": "Do you eat meat?",
}

# The change (third session): it names the new value, often beside the old one.
NEW: dict[str, dict[str, str]] = {
    "job": {"plain": "Leaving {old} for {new} was the best move I've made.",
            "passing": "My commute to {new} takes twenty minutes, heaven after {old}.",
            "other": "So {new} finally poached you from {old}!",
            "reply": "I'm at {new} now, handed my notice in at {old} in the spring."},
    "home": {"plain": "The last boxes are unpacked, {new} finally feels like home.",
             "passing": "The market in {new} is five minutes from our new place.",
             "other": "How's the move to {new} going? Settled in yet?",
             "reply": "We left {old}, we're in {new} since March."},
    "tool": {"plain": "We moved everything from {old} to {new} over the summer.",
             "passing": "The {new} migration is done, the {old} boxes are switched off.",
             "other": "Heard your team ditched {old} for {new}, how is it?",
             "reply": "{new} these days, {old} could not keep up."},
    "role": {"plain": "They made me {new}, so no more {old} for me.",
             "passing": "First week as {new} and I already miss being {old}.",
             "other": "Congrats on making {new}! Well deserved.",
             "reply": "I'm {new} now, since the reshuffle."},
    "habit": {"plain": "I swapped {old} for {new}, my back thanks me.",
              "passing": "Got up early for {new} again, it's become my thing.",
              "other": "You've really got into {new}, haven't you?",
              "reply": "{new} now, I dropped {old} months ago."},
    "relationship": {"plain": "Big news: I'm {new}!",
                     "passing": "Now that I'm {new}, weekends look very different.",
                     "other": "I heard you're {new} now, congratulations!",
                     "reply": "I'm {new} now, since the summer."},
    "car": {"plain": "Sold {old} and got {new}, what a difference.",
            "passing": "Parking {new} is so much easier than {old} was.",
            "other": "Loving the look of {new} you turned up in!",
            "reply": "{new} now, {old} finally died."},
    "study": {"plain": "I switched to {new}, {old} wasn't for me.",
              "passing": "The reading list for {new} is enormous.",
              "other": "How are you finding {new}? Big change.",
              "reply": "{new} now, I dropped {old} after the first term."},
    "diet": {"plain": "I've gone {new}, no going back.",
             "passing": "Since going {new} I cook a lot more.",
             "other": "Is it hard being {new}? You seem to love it.",
             "reply": "I'm {new} now, since January."},
}
NEW_QUESTION: dict[str, str] = {
    "job": "How's work treating you?", "home": "Where are you living these days?",
    "tool": "What's your team's database now?", "role": "What's your role these days?",
    "habit": "What are you doing for exercise?", "relationship": "Any news on the love front?",
    "car": "What are you driving now?", "study": "How's the course going?",
    "diet": "Still on the same diet?",
}

# A present-tense question (what holds now) and a past-tense one (what held before).
QUERY: dict[str, list[str]] = {
    "job": ["Which company does {name} work for?", "Where is {name} employed now?"],
    "home": ["Which city does {name} live in?", "Where is {name}'s home now?"],
    "tool": ["Which database does {name}'s team use?", "What does {name}'s backend run on?"],
    "role": ["What is {name}'s position now?", "What job does {name} do?"],
    "habit": ["What does {name} do for exercise these days?", "How does {name} stay fit?"],
    "relationship": ["What is {name}'s relationship status?", "Who is {name} with now?"],
    "car": ["Which car does {name} have now?", "What is {name}'s car?"],
    "study": ["What course is {name} taking now?", "What does {name} study?"],
    "diet": ["What does {name} eat these days?", "What is {name}'s diet now?"],
}
PAST: dict[str, str] = {
    "job": "Where did {name} work before?", "home": "Where did {name} live before?",
    "tool": "Which database did {name}'s team use before?",
    "role": "What was {name}'s job before?", "habit": "What exercise did {name} do before?",
    "relationship": "Who was {name} with before?", "car": "What car did {name} drive before?",
    "study": "What was {name} studying originally?", "diet": "What diet did {name} follow before?",
}
FILLER: dict[str, list[str]] = {
    "job": ["My manager wants the report by Friday.", "The office is freezing today.",
            "I have back to back meetings."],
    "home": ["Our neighbours had a party all night.", "The landlord finally fixed the boiler.",
             "The street is being dug up again."],
    "tool": ["The on-call pager went off twice.", "We had an outage on Tuesday.",
             "The deploy took forever."],
    "role": ["I have a performance review next week.", "The team is short staffed.",
             "I'm training a new starter."],
    "habit": ["My legs are aching today.", "I bought new trainers.",
              "I'm trying to sleep more."],
    "relationship": ["We're going to a wedding in June.", "My mum keeps asking questions.",
                     "We had a lovely dinner out."],
    "car": ["Petrol prices are mad.", "The motorway was jammed.", "I got a parking ticket."],
    "study": ["The library closes too early.", "My essay is due Monday.",
              "Group projects are the worst."],
    "diet": ["I tried a new recipe last night.", "The canteen food is awful.",
             "I'm doing a food shop later."],
}

# Controls: (class, first, second, present query, past query); {a}/{b}: two names.
# Series said without a marker of addition, and restatements of one value.
CONTROLS: list[tuple[str, str, str, str, str]] = [
    ("children", "{a} started nursery last week, she loves the sandpit.",
     "{b} started nursery today, she went straight for the sandpit.",
     "Which of {name}'s kids are at nursery?", "Who started nursery first?"),
    ("climbing", "Bouldering with {a} tonight, she's way better than me.",
     "Bouldering with {b} tonight, he's new to the wall.",
     "Who does {name} go bouldering with?", "Who did {name} go bouldering with first?"),
    ("dogs", "We adopted {a}, a greyhound, from the rescue centre.",
     "We adopted {b}, a lurcher, from the same rescue centre.",
     "What dogs does {name} have?", "Which dog did {name} adopt first?"),
    ("language", "My Greek lessons are going well, I can order food now.",
     "My Turkish lessons are going well, I can read signs now.",
     "What languages is {name} learning?", "Which language did {name} start first?"),
    ("cities", "We spent a week in Ljubljana, gorgeous old town.",
     "We spent a week in Sarajevo, gorgeous old town too.",
     "Which cities has {name} been to?", "Where did {name} go first?"),
    ("instrument", "I play the cello in a community orchestra.",
     "I play the banjo in a folk band on Thursdays.",
     "What instruments does {name} play?", "Which instrument did {name} play first?"),
    ("samejob", "I work at Corran Water in the billing team.",
     "Corran Water keeps me busy, same billing team as ever.",
     "Where does {name} work?", "Where did {name} work before?"),
    ("samecity", "We live in Aberdeen, near the harbour.",
     "Aberdeen is where we live, still near the harbour.",
     "Where does {name} live?", "Where did {name} live before?"),
]
KIDS = ["Ottilie", "Saoirse", "Matteo", "Bodhi", "Elodie", "Caspian", "Ines", "Tobiah"]


def scenarios(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    phrasings = ["plain", "passing", "other", "reply"]
    for attribute in NEW:
        for number, new_phrasing in enumerate(phrasings):
            for copy in range(2):
                old_phrasing = phrasings[(number + 1 + copy) % 4]
                name, other = rng.sample(NAMES, 2)
                old, new = rng.sample(VALUES[attribute], 2)
                fill = {"old": old, "new": new}
                dates, between = _dates(rng)
                length = rng.randint(8, 12)
                talk = SMALL_TALK + FILLER[attribute]
                key0 = _key(old_phrasing, OLD[attribute][old_phrasing].format(**fill),
                            OLD_QUESTION[attribute], name, other)
                s1, old_index = _session(rng, name, other, key0, talk, length)
                s2, _ = _session(rng, name, other, [(other, rng.choice(SMALL_TALK))],
                                 SMALL_TALK, length)
                key2 = _key(new_phrasing, NEW[attribute][new_phrasing].format(**fill),
                            NEW_QUESTION[attribute], name, other)
                s3, new_index = _session(rng, name, other, key2, talk, length)
                identifier = f"{attribute}:{new_phrasing}:{copy}"
                out.append(item(identifier, _split("v3:" + identifier), [name, other],
                                list(zip(dates, (s1, s2, s3), strict=True)), (0, old_index),
                                (2, new_index), rng.choice(QUERY[attribute]).format(name=name),
                                between, now=new, then=old,
                                past_query=PAST[attribute].format(name=name),
                                head={"old_phrasing": old_phrasing}))
    return out


def controls(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed + 1)
    out: list[dict[str, Any]] = []
    for cls, first, second, query, past in CONTROLS:
        for copy in range(3):
            name, other = rng.sample(NAMES, 2)
            a, b = rng.sample(KIDS, 2)
            dates, between = _dates(rng)
            length = rng.randint(8, 12)
            s1, i1 = _session(rng, name, other, [(name, first.format(a=a, b=b))],
                              SMALL_TALK, length)
            s2, _ = _session(rng, name, other, [(other, rng.choice(SMALL_TALK))],
                             SMALL_TALK, length)
            s3, i3 = _session(rng, name, other, [(name, second.format(a=a, b=b))],
                              SMALL_TALK, length)
            identifier = f"control:{cls}:{copy}"
            out.append(item(identifier, _split("v3:" + identifier), [name, other],
                            list(zip(dates, (s1, s2, s3), strict=True)), (0, i1), (2, i3),
                            query.format(name=name), between,
                            past_query=past.format(name=name)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=3108)
    args = parser.parse_args()
    write_set(__doc__, args.out, args.seed, (scenarios, controls))


if __name__ == "__main__":
    main()
