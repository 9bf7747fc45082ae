"""The gate's corpora: the fixture memories and prompts, their fixed split, distractors.

``fixtures/gate/corpus.json`` holds memories written by class (engineering learnings,
gotchas, decisions, preferences, people, conversation facts), each with prompts worded as
a person in a coding session asks (and, for learnings, gotchas and decisions, an
``indirect`` one: the symptom or situation only), and unrelated prompts of several
classes. The split
into a tuning half and a held-out half is fixed by a hash of the memory's key (all its
prompts go together) or of the unrelated prompt's text, within each class (every class
on both sides), made before anything was tuned.

Distractors are generated from classes too (components x events x causes, seeded), so a
store can hold thousands of other memories of the same register as the needed one.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ["CORPUS", "Corpus", "Memory", "Unrelated", "distractors", "load", "split"]

CORPUS = Path(__file__).parent / "fixtures" / "gate" / "corpus.json"
Half = Literal["tune", "held"]


@dataclass(frozen=True)
class Memory:
    key: str
    cls: str
    kind: str
    content: str
    prompts: tuple[str, ...]
    # Prompts that give the symptom or the situation only, none of the fix's words.
    indirect: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unrelated:
    cls: str
    prompt: str


@dataclass(frozen=True)
class Corpus:
    memories: tuple[Memory, ...]
    unrelated: tuple[Unrelated, ...]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _halves(items: list[tuple[str, str]]) -> dict[str, Half]:
    """(class, key) pairs to halves: within each class, in order of the keys' sha256,
    alternately tuning and held out, so that each class is on both sides."""
    out: dict[str, Half] = {}
    for cls in sorted({c for c, _ in items}):
        keys = sorted((k for c, k in items if c == cls), key=_digest)
        out.update({k: "tune" if i % 2 == 0 else "held" for i, k in enumerate(keys)})
    return out


def _raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CORPUS.read_text(encoding="utf-8"))
    return data


def split(key: str) -> Half:
    """The fixed half of a memory (by its key) or an unrelated prompt (by its text)."""
    raw = _raw()
    halves = _halves([(m["class"], m["key"]) for m in raw["memories"]])
    halves.update(_halves([(u["class"], u["prompt"]) for u in raw["unrelated"]]))
    return halves[key]


def load(half: Half | None = None) -> Corpus:
    raw = _raw()
    mem_half = _halves([(m["class"], m["key"]) for m in raw["memories"]])
    unrel_half = _halves([(u["class"], u["prompt"]) for u in raw["unrelated"]])
    memories = tuple(
        Memory(m["key"], m["class"], m["kind"], m["content"], tuple(m["prompts"]),
               tuple(m.get("indirect", ())))
        for m in raw["memories"] if half is None or mem_half[m["key"]] == half
    )
    unrelated = tuple(
        Unrelated(u["class"], u["prompt"])
        for u in raw["unrelated"] if half is None or unrel_half[u["prompt"]] == half
    )
    return Corpus(memories, unrelated)


_COMPONENTS = [
    "the image thumbnailer", "the PDF invoice renderer", "the admin dashboard", "the email "
    "digest job", "the audit exporter", "the feature store", "the rate limiter", "the "
    "geocoding client", "the SMS gateway adapter", "the search autocomplete", "the "
    "recommendation batch", "the inventory sync", "the shipping label service", "the "
    "translation loader", "the report scheduler", "the webhook relay", "the metrics "
    "collector", "the session store", "the file upload handler", "the notification "
    "fan-out", "the currency converter", "the tenant provisioning script", "the ledger "
    "reconciliation", "the chat widget", "the OCR pipeline", "the price calculator", "the "
    "coupon validator", "the password reset flow", "the sitemap generator", "the CDN purge "
    "task", "the GDPR export tool", "the warehouse picker app", "the map tile cache", "the "
    "avatar cropper", "the calendar sync", "the analytics beacon", "the backup rotation",
    "the license checker", "the onboarding wizard", "the A/B test assigner",
]
_EVENTS = [
    "was slow after the last deploy", "started returning 502s at peak hours", "was moved to "
    "its own repository", "now runs on the ARM nodes", "lost its cache after the restart",
    "was rewritten in Go", "got a new owner in the platform team", "logs too much at debug "
    "level", "is behind a feature flag for now", "had its timeout raised to 30 seconds",
    "was paused during the migration", "needs a manual step after each release", "reads "
    "its settings from the shared config map", "is deprecated and will be removed next "
    "quarter", "was load tested at 2,000 requests per second", "has no tests for the error "
    "paths", "leaked file handles under load", "double-counted events on retries", "ran out "
    "of memory on large inputs", "broke when the vendor changed their API",
]
_CAUSES = [
    "because of an N+1 query", "after the library upgrade", "since the index was dropped",
    "due to a missing retry", "because the queue was full", "after the certificate "
    "expired", "because of clock skew between hosts", "when the disk filled up", "because "
    "a config key was misspelled", "after the schema change", "since the vendor rate "
    "limited us", "because two workers raced on one row", "after DNS changes", "because "
    "of a wrong default locale", "due to an off-by-one in pagination", "because the "
    "thread pool was too small", "after a dependency pinned an old version", "because "
    "the payload grew past 1 MB", "when the replica lagged", "because logs were not "
    "rotated",
]


def distractors(count: int, *, seed: int = 25) -> list[str]:
    """``count`` distinct engineering memories from the classes above (seeded)."""
    rng = random.Random(seed)
    combos = [(c, e, k) for c in _COMPONENTS for e in _EVENTS for k in _CAUSES]
    rng.shuffle(combos)
    out = []
    for component, event, cause in combos[:count]:
        text = f"{component} {event} {cause}."
        out.append(text[0].upper() + text[1:])
    return out
