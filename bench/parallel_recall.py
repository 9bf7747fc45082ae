"""Concurrent dense recalls: does a second, third and fourth thread add throughput?

One store of ``--memories`` generated notes (bench/scale.py's generator) in one
namespace. Then the same work twice: one thread doing ``--recalls`` recalls, and four
threads doing ``--recalls`` each (four times the work). If recalls were serialised
(a lock held while scoring), four threads would take about 4x as long; on a machine
with C cores the floor is about 4/C x. Measured twice: whole ``Memory.recall`` calls,
and the mirror's dense scoring alone (``VectorMirror.scores`` with vectors encoded
beforehand: numpy releases the GIL in its loops, so this is where threads can overlap).

    PYTHONPATH=server .venv/bin/python bench/parallel_recall.py --memories 20000 \
        --json bench/results/parallel_recall.json

``--home DIR`` keeps the store (and reuses it when it already holds the memories).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, table, write_json  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402
from scale import make_item, make_query  # noqa: E402

NS = "bench-0"
THREADS = 4


def fill(memory: Memory, count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    items = [make_item(rng, i) for i in range(count)]
    have = memory.status().namespaces.get(NS, 0)
    if have < count:
        for start in range(have, count, 1000):
            memory.store_many([{"content": it["content"], "tags": it["tags"]}
                               for it in items[start : start + 1000]], namespace=NS)
    return items


def timed(work: Callable[[int], None], threads: int) -> float:
    """Wall seconds for ``threads`` threads each running ``work(thread index)``."""
    barrier = threading.Barrier(threads + 1)
    errors: list[BaseException] = []

    def run(index: int) -> None:
        barrier.wait()
        try:
            work(index)
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)

    pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in pool:
        thread.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise errors[0]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=20000)
    parser.add_argument("--recalls", type=int, default=100, help="per thread")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, dest="json_path")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aide-parallel-") as tmp:
        home = args.home or Path(tmp) / "home"
        with Memory(settings=Settings(home=home)) as memory:
            items = fill(memory, args.memories, args.seed)
            qrng = random.Random(args.seed + 1)
            queries = [[make_query(qrng, qrng.choice(items)) for _ in range(args.recalls)]
                       for _ in range(THREADS)]
            memory.recall(queries[0][0], namespace=NS)  # model and mirror loaded
            space = memory.internals.embedder.space
            assert space is not None
            table_name = memory.internals.tables.table_name(space)
            vectors = [memory.internals.embedder.encode(batch) for batch in queries]

            def recalls(index: int) -> None:
                for query in queries[index]:
                    memory.recall(query, namespace=NS, limit=10)

            def scoring(index: int) -> None:
                conn = memory.internals.db.conn()
                for vector in vectors[index]:
                    memory.internals.mirror.scores(conn, space, table_name, [NS],
                                                   np.asarray(vector),
                                         shortlist=3000, exact_up_to=20000)

            rows: list[dict[str, Any]] = []
            for name, work in (("recall", recalls), ("dense scoring", scoring)):
                one = min(timed(work, 1) for _ in range(args.repeat))
                four = min(timed(work, THREADS) for _ in range(args.repeat))
                rows.append({"measured": name, "memories": args.memories,
                             "recalls_per_thread": args.recalls, "one_thread_s": one,
                             "four_threads_s": four, "ratio": four / one,
                             "serialised_would_be": float(THREADS)})
                print(table(list(rows[-1]), [list(rows[-1].values())]), file=sys.stderr,
                      flush=True)
    print(table(["measured", "1 thread s", "4 threads s", "4x work ratio"],
                [[r["measured"], r["one_thread_s"], r["four_threads_s"], r["ratio"]]
                 for r in rows]))
    write_json(args.json_path, {"benchmark": "parallel_recall", "results": rows,
                                "load_average": os.getloadavg(), "machine": machine()})


if __name__ == "__main__":
    main()
