"""Bulk loading for bench/scale.py: a million memories without a million encodings.

Encoding a million texts takes over an hour on two cores, so only the parts of the scale
texts are encoded (each name, project, component, problem, fix, technology, city,
preference and template skeleton: under a thousand short texts), and each bulk memory's
vector is the normalised weighted sum of its parts' vectors plus Gaussian noise. The
vectors share structure the way real ones do (two notes about the same project and
problem sit close), and a query's real vector lands near its target's. How close the
composed vectors are to the real ones is measured on a sample that is encoded both ways
(``fidelity``) and reported with the results.

The rows are written through the storage layer, one transaction per batch: the row,
its keyword document and its vec0 vector, with ``vector_state`` kept as every write
keeps it (``pipeline=False``). The write pipeline's screen, audit and hooks cost more
than the row itself (66 rows/s on this machine at load 15, cProfile: screen and
redaction 40%, audit 12%), which would put a million rows out of reach; with
``pipeline=True`` they run too, with the vectors given, for a run that has the time.
Memories written by ``store_many`` at each size go through the whole pipeline.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from aide_memoire import Memory
from aide_memoire.engine.core import clock
from aide_memoire.engine.storage.store import NewRow

__all__ = ["Composer", "bulk_write"]

# How much each part weighs in a composed vector, and the noise (per component, before
# normalising): chosen so that composed and real vectors of the same text agree about
# as well as two paraphrases do (fidelity is printed; nothing is tuned on the queries).
PART_WEIGHT = 1.0
SKELETON_WEIGHT = 0.8
NOISE = 0.02


def _skeleton(template: str) -> str:
    """A template with its fields blanked: what every memory of that template shares."""
    out = template
    for name in ("who", "problem", "project", "component", "ticket", "fix", "tech", "pref",
                 "city", "month", "year", "day"):
        out = out.replace("{" + name + "}", "")
    return " ".join(out.split())


class Composer:
    """Vectors for generated scale items, from encoded parts (see the module)."""

    PARTS = ("who", "project", "component", "tech", "problem", "fix", "city", "pref")

    def __init__(self, memory: Memory, templates: Sequence[str], seed: int) -> None:
        self.memory = memory
        self.templates = templates
        self.rng = np.random.default_rng(seed)
        self._vectors: dict[str, np.ndarray] = {}
        skeletons = [_skeleton(t) for t in templates]
        self._encode(skeletons)
        self.skeletons = [self._vectors[s] for s in skeletons]

    def _encode(self, texts: Sequence[str]) -> None:
        todo = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if todo:
            for text, vector in zip(todo, self.memory.internals.embedder.encode(todo), strict=True):
                self._vectors[text] = np.asarray(vector, np.float32)

    def vectors(self, items: Sequence[dict[str, Any]]) -> np.ndarray:
        """One composed unit vector per item."""
        wanted = [self._parts(item) for item in items]
        self._encode([p for parts in wanted for p in parts])
        out = np.empty((len(items), len(self.skeletons[0])), np.float32)
        noise = self.rng.standard_normal(out.shape).astype(np.float32) * NOISE
        for i, (item, parts) in enumerate(zip(items, wanted, strict=True)):
            vector = SKELETON_WEIGHT * self.skeletons[item["template"]] + noise[i]
            for part in parts:
                vector = vector + PART_WEIGHT * self._vectors[part]
            out[i] = vector / np.linalg.norm(vector)
        return out

    def _parts(self, item: dict[str, Any]) -> list[str]:
        """The field values the item's template uses (a template names only some)."""
        template = self.templates[item["template"]]
        return [str(item["fields"][p]) for p in self.PARTS if "{" + p + "}" in template]

    def fidelity(self, items: Sequence[dict[str, Any]]) -> dict[str, float]:
        """Cosine of composed vs really encoded vectors of the same texts, and of really
        encoded vectors of two different texts of the sample (the scale to read it on)."""
        real = np.asarray(self.memory.internals.embedder.encode([it["content"] for it in items]),
                          np.float32)
        composed = self.vectors(items)
        same = (real * composed).sum(axis=1)
        others = (real * np.roll(real, 1, axis=0)).sum(axis=1)
        return {"composed_vs_real_mean": float(same.mean()),
                "composed_vs_real_min": float(same.min()),
                "real_vs_other_real_mean": float(others.mean())}


def bulk_write(memory: Memory, items: Sequence[dict[str, Any]], namespaces: Sequence[str],
               vectors: np.ndarray, *, pipeline: bool = False,
               skip_hooks: Sequence[str] = ()) -> list[str]:
    """Write the items with their vectors given (see the module for the two paths)."""
    rows = [NewRow(namespace=ns, kind="note", content=it["content"], tags=list(it["tags"]))
            for it, ns in zip(items, namespaces, strict=True)]
    if pipeline:
        result = memory.internals.context.pipeline.write(
            rows, secrets="redact", given_vectors=dict(enumerate(vectors)),
            skip_hooks=tuple(skip_hooks))
        return result.ids
    space = memory.internals.embedder.space
    assert space is not None, "bulk loading needs the embedding model"
    ids: list[str] = []
    with memory.internals.db.write() as tx:
        stamp = clock.format_time(clock.now())
        pending = []
        for row, vector in zip(rows, vectors, strict=True):
            rowid, memory_id = memory.internals.store.insert(tx, row)
            ids.append(memory_id)
            pending.append((rowid, row.namespace, vector))
        memory.internals.tables.insert(tx, space, pending, stamp)
    return ids


def item_rng(seed: int, number: int) -> random.Random:
    """The generator of item ``number``: any item can be made again from its number."""
    return random.Random(seed * 1_000_003 + number)
