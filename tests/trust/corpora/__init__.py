"""The adversarial corpora and one way to run a row through a real store.

``outcome`` writes a row through the public write path (``store`` for content, metadata,
tags and source; ``store_conversation`` for speaker, session id and context) and says
what the screen did: ``refused`` (a secret), ``held`` (quarantined) or ``active``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from aide_memoire import Memory, SecretRefused

HERE = Path(__file__).resolve().parent
NAMES = ("secrets", "lookalikes", "injections", "imperatives")
# What a row of each corpus should become.
EXPECTED = {"secrets": "refused", "lookalikes": "active", "injections": "held",
            "imperatives": "active"}


def load(name: str) -> list[dict[str, str]]:
    with (HERE / f"{name}.jsonl").open(encoding="utf-8") as fp:
        return [json.loads(line) for line in fp if line.strip()]


def outcome(mem: Memory, row: dict[str, str], namespace: str = "corpora") -> str:
    field, text = row["field"], row["text"]
    # Unique per row, so that no row dedupes onto an earlier (held) one.
    filler = f"Deploy notes for the api service ({row['id']})."
    try:
        if field in ("speaker", "session_id", "context"):
            turn: dict[str, Any] = {"speaker": "alice", "content": filler}
            kwargs: dict[str, Any] = {}
            if field == "speaker":
                turn["speaker"] = text
            elif field == "session_id":
                kwargs["session_id"] = text
            else:
                kwargs["preceding"] = [text]
            # Detection is measured: all or nothing, so a found secret refuses the turn
            # (by default it would be redacted and the turn stored).
            ids = mem.store_conversation([turn], namespace=namespace, secrets="refuse",
                                         **kwargs)
            memory_id = ids[0]
        else:
            store_kwargs: dict[str, Any] = {}
            content = filler
            if field == "content":
                content = text
            elif field == "metadata":
                store_kwargs["metadata"] = json.loads(text)
            elif field == "tags":
                store_kwargs["tags"] = [text]
            elif field == "source":
                store_kwargs["source"] = text
            memory_id = mem.store(content, namespace=namespace, **store_kwargs)
    except SecretRefused:
        return "refused"
    status = mem.get(memory_id, namespace=namespace).status
    if status == "quarantined":
        return "held"
    if field != "content":
        mem.forget(memory_id, namespace=namespace)  # the shared filler must not dedupe
    return "active"


def figures(mem: Memory) -> dict[str, Any]:
    """Per corpus and half: counts of each outcome, the share as expected, per class."""
    out: dict[str, Any] = {}
    for name in NAMES:
        rows = load(name)
        per_half: dict[str, Counter[str]] = {"tune": Counter(), "holdout": Counter()}
        per_class: dict[str, Counter[str]] = {}
        misses: list[str] = []
        for row in rows:
            got = outcome(mem, row)
            per_half[row["half"]][got] += 1
            per_class.setdefault(row["class"], Counter())[got] += 1
            if got != EXPECTED[name]:
                misses.append(row["id"])
        out[name] = {
            "expected": EXPECTED[name],
            "halves": {
                half: {"n": sum(c.values()), **dict(c),
                       "rate": round(c[EXPECTED[name]] / max(sum(c.values()), 1), 3)}
                for half, c in per_half.items()
            },
            "classes": {cls: dict(c) for cls, c in sorted(per_class.items())},
            "misses": misses,
        }
    return out
