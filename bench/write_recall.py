"""The hooks' pattern on one store: one turn stored, then one prompt recalled, repeated;
recall's wall and CPU time per call (p50/p95), and the same prompts recalled with no
write between them for comparison. Issue 28: recall's caches are keyed by the store's
write marker, so every write makes the next recall count its words again.

    python bench/write_recall.py STORE_HOME [--rounds 200] [--namespace bench-0] [--json OUT]

STORE_HOME is a store folder (a copy: the bench writes to it), e.g. one kept by
``bench/scale.py --bulk --keep``. Prompts and turns are written from templates.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

from _common import percentile, write_json
from aide_memoire import Memory

SUBJECTS = ["the deploy script", "our staging database", "the login page", "the nightly job",
            "the cache layer", "the billing export", "the search index", "the mobile build"]
CHANGES = ["was moved to", "now runs on", "broke after the upgrade to", "was rewritten in",
           "waits on", "is owned by"]
PLACES = ["the new cluster", "Python 3.13", "the platform team", "a cron at 3 am",
          "Postgres 17", "the second region"]
ASKS = ["what happened to {s}", "who looks after {s} now", "why is {s} slow",
        "where does {s} run"]


def _turn(rng: random.Random) -> str:
    return f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(CHANGES)} {rng.choice(PLACES)}"


def _prompt(rng: random.Random) -> str:
    return rng.choice(ASKS).format(s=rng.choice(SUBJECTS))


def _timed(memory: Memory, prompt: str, namespace: str) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    memory.recall(prompt, namespace=namespace, limit=5)
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def _summary(samples: list[tuple[float, float]]) -> dict[str, float]:
    walls, cpus = [s[0] for s in samples], [s[1] for s in samples]
    return {"wall_p50_ms": percentile(walls, 50), "wall_p95_ms": percentile(walls, 95),
            "cpu_p50_ms": percentile(cpus, 50), "cpu_p95_ms": percentile(cpus, 95)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--namespace", default="bench-0",
                        help="the namespace written and asked (scale.py's one-namespace layout)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", dest="json_path", type=Path, default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with Memory(args.home) as memory:
        memory.internals.embedder.wait()
        for _ in range(5):  # warm-up: the mirror loaded, the model run once
            memory.recall(_prompt(rng), namespace=args.namespace, limit=5)
        written: list[tuple[float, float]] = []
        still: list[tuple[float, float]] = []
        for _ in range(args.rounds):
            memory.store(_turn(rng), namespace=args.namespace)
            written.append(_timed(memory, _prompt(rng), args.namespace))
            still.append(_timed(memory, _prompt(rng), args.namespace))
    result = {"rounds": args.rounds, "load_1min": os.getloadavg()[0],
              "after_a_write": _summary(written), "no_write_between": _summary(still)}
    for name in ("after_a_write", "no_write_between"):
        row = result[name]
        assert isinstance(row, dict)
        print(f"{name:18} wall p50 {row['wall_p50_ms']:.1f} p95 {row['wall_p95_ms']:.1f} ms; "
              f"cpu p50 {row['cpu_p50_ms']:.1f} p95 {row['cpu_p95_ms']:.1f} ms")
    print(f"load {result['load_1min']:.2f}", file=sys.stderr)
    write_json(args.json_path, result)


if __name__ == "__main__":
    main()
