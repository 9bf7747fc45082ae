"""The class-written corpora of issue #26 (generate.py): load them and score a store.

Each row is written the way its class arrives: secrets and ordinary notes by a program
(``Memory.store``), attacks by the model's own call (actor ``mcp``: provenance
``model``), team rules and other notes by the person (actor ``cli``: provenance
``person``). The outcome is what the store did: refused, held (quarantined) or active.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from aide_memoire import Memory, SecretRefused

from .generate import EXPECTED, HERE, NAMES

__all__ = ["ACTORS", "EXPECTED", "NAMES", "figures", "load", "outcome"]

ACTORS = {"secrets": "python", "keys": "python", "attacks": "mcp", "rules": "cli"}


def load(name: str) -> list[dict[str, str]]:
    with (HERE / f"{name}.jsonl").open(encoding="utf-8") as fp:
        return [json.loads(line) for line in fp if line.strip()]


def outcome(mem: Memory, row: dict[str, str]) -> str:
    namespace = f"classes-{row['corpus']}"
    try:
        with mem.acting_as(ACTORS[row["corpus"]]):
            memory_id = mem.store(row["text"], namespace=namespace)
    except SecretRefused:
        return "refused"
    status = mem.get(memory_id, namespace=namespace).status
    return "held" if status == "quarantined" else "active"


def figures(mem: Memory) -> dict[str, Any]:
    """Per corpus and half: the outcomes, the count not as expected, and those rows."""
    out: dict[str, Any] = {}
    for name in NAMES:
        halves: dict[str, Counter[str]] = {"tune": Counter(), "holdout": Counter()}
        wrong: dict[str, list[str]] = {"tune": [], "holdout": []}
        for row in load(name):
            got = outcome(mem, row)
            halves[row["half"]][got] += 1
            if got != EXPECTED[name]:
                wrong[row["half"]].append(row["id"])
        out[name] = {"expected": EXPECTED[name], "halves": {
            h: {"n": sum(c.values()), **dict(c), "not_expected": len(wrong[h]),
                "rows_not_expected": wrong[h]} for h, c in halves.items()}}
    return out
