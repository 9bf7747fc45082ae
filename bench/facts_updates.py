"""Cost of the general supersession path per stored memory, inside real writes.

    python bench/facts_updates.py PATH/locomo-dev.json [--mode hybrid|bm25] [--json OUT]

Ingests the LOCOMO turns (one namespace per conversation, as bench/locomo.py does) and
the knowledge-update suite's notes (tests/facts/knowledge_updates_general.json, one
namespace), timing the general path's step of the write hook (each memory's signature,
terms, candidate lookups, candidates' signatures, cosines, links) around each batch.
Prints microseconds per memory (mean and percentiles of per-batch means), links and
proposals made.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, percentile, table, write_json  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402
from aide_memoire.engine.facts import updates  # noqa: E402
from locomo import ingest  # noqa: E402

SUITE = Path(__file__).resolve().parent.parent / "tests/facts/knowledge_updates_general.json"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", type=Path, help="a LOCOMO-format JSON file")
    parser.add_argument("--mode", choices=["hybrid", "bm25"], default="bm25")
    parser.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = parser.parse_args()
    if args.mode == "bm25":
        os.environ["AIDE_MEMOIRE_EMBEDDING_MODEL"] = "none"
    per_batch: dict[str, list[tuple[float, int]]] = {"turns": [], "notes": []}
    which = ["turns"]
    original = updates.GeneralUpdates.__call__
    original_item = updates.GeneralUpdates.item
    reading = [0.0]  # the batch's signatures, read before the step runs

    def timed_item(self: Any, *args: Any) -> Any:
        started = time.perf_counter()
        found = original_item(self, *args)
        reading[0] += time.perf_counter() - started
        return found

    def timed(self: Any, tx: Any, items: list[Any]) -> None:
        started = time.perf_counter()
        original(self, tx, items)
        if items:
            spent = time.perf_counter() - started + reading[0]
            per_batch[which[0]].append((spent, len(items)))
        reading[0] = 0.0

    updates.GeneralUpdates.item = timed_item  # type: ignore[method-assign,assignment]
    updates.GeneralUpdates.__call__ = timed  # type: ignore[method-assign,assignment]
    samples = json.loads(args.path.read_text(encoding="utf-8"))
    suite = json.loads(SUITE.read_text(encoding="utf-8"))
    settings = Settings(home=Path(tempfile.mkdtemp()))
    if args.mode == "bm25":
        settings = Settings(home=settings.home, embedding_model="none")
    with Memory(settings=settings) as memory:
        for sample in samples:
            ingest(memory, sample)
        which[0] = "notes"
        for phase, at in (("old", "2024-01-15T10:00:00Z"), ("new", "2024-06-15T10:00:00Z")):
            for s in suite["scenarios"] + suite["controls"]:
                memory.store(s[phase], namespace="suite", observed_at=at)
        states = dict(memory.internals.db.conn().execute(
            "SELECT state, count(*) FROM memory_updates GROUP BY state").fetchall())
    result: dict[str, Any] = {"mode": args.mode, "states": states, "machine": machine()}
    rows = []
    for name, batches in per_batch.items():
        count = sum(n for _, n in batches)
        means = [t * 1e6 / n for t, n in batches]
        result[name] = {
            "memories": count, "us_per_memory": sum(t for t, _ in batches) * 1e6 / count,
            "p50_batch_us": percentile(means, 50), "p95_batch_us": percentile(means, 95),
        }
        rows.append([name, count, result[name]["us_per_memory"], result[name]["p50_batch_us"],
                     result[name]["p95_batch_us"]])
    print(table(["memories", "count", "us/memory", "p50 batch us", "p95 batch us"], rows))
    print(json.dumps(result))
    write_json(args.json, result)


if __name__ == "__main__":
    main()
