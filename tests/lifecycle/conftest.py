"""A generated store with planted duplicates, near duplicates, stale and useful memories."""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.core import clock

NS = "project:scenario"
_VOCABULARY = {
    "p": "Maria Omar Chen Priya Lukas Aiko Tomas Fatima Diego Ingrid Kwame Sofia Ravi Mei",
    "c": "Tokyo Lima Nairobi Oslo Denver Cairo Lisbon Hanoi Quito Perth Krakow Dakar Seoul",
    "m": "January March May July September November",
    "event": "conference wedding offsite workshop marathon reunion",
    "adj": "old noisy colour shared second broken",
    "thing": "spreadsheets photos posters envelopes invoices labels",
    "food": "ramen ceviche tagine pierogi falafel curry dumplings paella",
    "lang": "Go Rust Java Python Kotlin Elixir",
    "store": "Redis Memcached CDN disk",
    "sport": "swimming judo violin chess tennis climbing",
    "day": "Monday Tuesday Wednesday Thursday Friday Saturday",
    "report": "revenue security hiring carbon churn audit",
    "allergen": "peanuts shellfish gluten sesame lactose kiwi",
    "part": "brake-pads timing-belt clutch battery alternator tyres",
    "vehicle": "van truck hatchback minibus scooter",
    "instrument": "bass drums trumpet cello banjo saxophone",
    "genre": "jazz punk folk salsa ska blues",
    "plant": "basil lemon-tree fern cactus rosemary tomato",
}
W = {key: words.split() for key, words in _VOCABULARY.items()} | {
    "n": [str(i) for i in range(2, 40)]
}
PEOPLE = W["p"]
TEMPLATES = [
    "{p} booked a {n}-night stay in {c} for the {m} {event}.",
    "The {adj} printer on floor {n} jams whenever someone prints {thing}.",
    "{p} recommends the {food} at the little place near the {c} train station.",
    "Our {lang} service times out after {n} seconds when the {store} cache is cold.",
    "{p}'s daughter starts {sport} lessons every {day} at {n} pm.",
    "The quarterly {report} report is due on the {n}th and {p} signs it off.",
    "{p} is allergic to {allergen} and avoids {food} dishes.",
    "The {c} office wifi password rotates every {n} days; ask {p}.",
    "We replaced the {adj} {part} in the {vehicle} after {n} thousand kilometres.",
    "{p} plays {instrument} in a {genre} band that rehearses on {day}s.",
    "The {plant} on the balcony needs water every {n} days in {m}.",
    "Ticket {n} about {lang} memory leaks was closed as a duplicate by {p}.",
]
BILLING = [
    "The billing service retries failed card payments three times before giving up.",
    "Billing service: failed card payments are retried with exponential backoff.",
    "When a card payment fails, the billing service logs it and retries it later.",
    "The billing service emails a receipt after each successful card payment.",
]
NEAR = [
    ("We deploy to production every Tuesday at 10am.",
     "We deploy to production every Tuesday at 10 am."),
    ("Alice prefers code reviews in the morning, before standup.",
     "Alice prefers code reviews in the morning before the standup."),
    ("The staging database is reset every Sunday night at midnight.",
     "The staging database gets reset every Sunday night at midnight."),
]


@dataclass
class Planted:
    home: Path
    duplicate_extras: set[str] = field(default_factory=set)
    duplicate_keepers: set[str] = field(default_factory=set)
    tagged_copy: tuple[str, str] = ("", "")  # (newer copy, oldest) with different tags
    expired: str = ""
    near_pairs: list[tuple[str, str]] = field(default_factory=list)  # (new, existing)
    stale: set[str] = field(default_factory=set)
    useful_old: set[str] = field(default_factory=set)
    wrong: str = ""
    billing: set[str] = field(default_factory=set)
    filler: list[str] = field(default_factory=list)


def settings(home: Path, **extra: object) -> Settings:
    return Settings(home=home, **extra)  # type: ignore[arg-type]


# Planted items on unrelated topics, so that only what is planted is found.
DISTINCT = [
    "The garage door code was changed to four sevens after the break-in.",
    "Grandma's lasagne recipe uses nutmeg in the bechamel sauce.",
    "The team voted to move the retrospective to Thursday afternoons.",
    "Volcanic soil on the island makes the local wine taste of smoke.",
    "Our lease on the warehouse ends in the spring of next year.",
    "The cat refuses to eat anything but salmon-flavoured kibble.",
    "Invoices from the translation agency arrive as scanned PDFs.",
    "Hiking boots should be resoled rather than replaced.",
    "The mortgage rate is fixed until the end of the decade.",
    "Jupiter's moon Europa probably hides an ocean under its ice.",
    "The choir performs the Brahms requiem at the cathedral in spring.",
    "The old laptop's battery swells when it is left charging all week.",
    "The bakery on the corner sells sourdough only on weekends.",
    "Our domain name renews automatically every October.",
]


def _filler(rng: random.Random, template: str | None = None) -> str:
    values = {key: rng.choice(options) for key, options in W.items()}
    return (template or rng.choice(TEMPLATES)).format(**values)


def _record(memory_id: str, content: str, *, tags: list[str], days_ago: float = 0,
            importance: float = 0.5) -> str:
    when = clock.format_time(clock.now() - timedelta(days=days_ago))
    return json.dumps({"id": memory_id, "namespace": NS, "kind": "note", "content": content,
                       "tags": tags, "importance": importance, "created_at": when,
                       "updated_at": when})


def build(home: Path) -> Planted:
    rng = random.Random(7)
    texts = iter(DISTINCT)
    planted = Planted(home=home)
    with Memory(settings=settings(home)) as memory:
        # Conversation turns are never deduplicated, merged or demoted: most of the store.
        for session in range(12):
            memory.store_conversation(
                [{"speaker": PEOPLE[(session + n) % 3], "content": _filler(rng)}
                 for n in range(20)], namespace=NS, session_id=f"s{session}",
            )
        # One note per template: unrelated to each other and to the planted items.
        planted.filler = memory.store_many(
            [{"content": _filler(rng, template)} for template in TEMPLATES], namespace=NS
        )
        lines = []
        for group in range(4):  # exact duplicates, same tags: the safe band retires them
            text = next(texts)
            ids = [f"dup{group}x{copy}{'0' * 20}" for copy in range(2 + group % 2)]
            lines += [_record(i, text, tags=["dup"]) for i in ids]
            planted.duplicate_keepers.add(ids[0])
            planted.duplicate_extras.update(ids[1:])
        text = next(texts)
        lines += [_record("tagged0" + "0" * 25, text, tags=["a"]),
                  _record("tagged1" + "0" * 25, text, tags=["b"])]
        planted.tagged_copy = ("tagged1" + "0" * 25, "tagged0" + "0" * 25)
        for n in range(3):
            planted.stale.add(f"stale{n}" + "0" * 26)
            lines.append(_record(f"stale{n}" + "0" * 26, next(texts),
                                 tags=["old"], days_ago=400, importance=0.3))
        for n in range(2):
            planted.useful_old.add(f"keep{n}" + "0" * 27)
            lines.append(_record(f"keep{n}" + "0" * 27, next(texts),
                                 tags=["old"], days_ago=400, importance=0.9))
        planted.useful_old.add("helped" + "0" * 26)
        lines.append(_record("helped" + "0" * 26, next(texts),
                             tags=["old"], days_ago=400, importance=0.3))
        report = memory.import_(lines)
        assert report.added == len(lines)
        for _ in range(3):
            memory.feedback("helped" + "0" * 26, "helpful", namespace=NS)
        planted.wrong = memory.store(next(texts), namespace=NS)
        memory.feedback(planted.wrong, "wrong", namespace=NS)
        planted.expired = memory.store(
            "Temporary: the office is closed today for the inspection.", namespace=NS,
            metadata={"expires_at": clock.format_time(clock.now() - timedelta(hours=1))},
        )
        planted.billing = set(memory.store_many(
            [{"content": text, "tags": ["billing"]} for text in BILLING], namespace=NS))
        for first, second in NEAR:
            existing = memory.store(first, namespace=NS)
            new = memory.store(second, namespace=NS)
            planted.near_pairs.append((new, existing))
    return planted


@pytest.fixture(scope="session")
def scenario_template(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    return build(tmp_path_factory.mktemp("scenario") / "home")


@pytest.fixture
def scenario(scenario_template: Planted, tmp_path: Path) -> Planted:
    """A private copy of the generated store."""
    home = tmp_path / "home"
    shutil.copytree(scenario_template.home, home)
    copy = Planted(**{**scenario_template.__dict__, "home": home})
    return copy
