"""Memory and speed of the vector side alone at 100k rows: the recall mirror and the
near-duplicate check, without the model (random unit vectors in a real store).

bench/scale.py measures the whole product but needs the model for every row (an hour
and more on a loaded machine); this isolates what the vector mirror costs, so two
checkouts can be compared in minutes:

    PYTHONPATH=server .venv/bin/python bench/mirror_memory.py --rows 100000
"""

from __future__ import annotations

import argparse
import inspect
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import percentile, write_json  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402
from aide_memoire.engine.core import clock  # noqa: E402
from aide_memoire.engine.lifecycle.dedup import NearDuplicates  # noqa: E402
from aide_memoire.engine.recall.embed import EmbeddingSpace  # noqa: E402
from aide_memoire.engine.recall.mirror import VectorMirror  # noqa: E402
from aide_memoire.engine.storage.store import NewRow, Written  # noqa: E402

NS = "bench"
DIM = 384


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    unit_rows: np.ndarray = m / np.linalg.norm(m, axis=1, keepdims=True)
    return unit_rows


def fill(memory: Memory, space: EmbeddingSpace, rows: int, rng: np.random.Generator) -> None:
    tables = memory.internals.tables
    for start in range(0, rows, 5000):
        count = min(5000, rows - start)
        vectors = unit(rng, count)
        with memory.internals.db.write() as tx:
            stamp = clock.format_time(clock.now())
            items = []
            for i in range(count):
                row = NewRow(namespace=NS, kind="note", content=f"synthetic note {start + i}")
                rowid, _ = memory.internals.store.insert(tx, row)
                items.append((rowid, NS, vectors[i]))
            tables.insert(tx, space, items, stamp)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(5)
    space = EmbeddingSpace(model="synthetic", dim=DIM)
    out: dict[str, Any] = {"rows": args.rows}
    with tempfile.TemporaryDirectory() as tmp, Memory(
        settings=Settings(home=Path(tmp) / "home", embedding_model="none")
    ) as memory:
        fill(memory, space, args.rows, rng)
        table = memory.internals.tables.table_name(space)
        out["rss_after_fill_mb"] = rss_mb()
        cache = VectorMirror(memory.internals.tables)
        conn = memory.internals.db.conn()
        queries = unit(rng, args.queries)
        times = []
        for query in queries:
            started = time.perf_counter()
            with memory.internals.db.read() as snapshot:
                cache.scores(snapshot, space, table, [NS], query, shortlist=3000,
                             exact_up_to=20_000)
            times.append(time.perf_counter() - started)
        out["recall_dense_p50_ms"] = 1000 * percentile(times, 50)
        out["rss_after_recall_mb"] = rss_mb()
        # Four threads at once, each its own connection: wall time against one thread.
        def four(n: int) -> float:
            def work() -> None:
                with memory.internals.db.read() as snapshot:
                    for query in queries[:n]:
                        cache.scores(snapshot, space, table, [NS], query, shortlist=3000,
                                     exact_up_to=20_000)
            started = time.perf_counter()
            threads = [threading.Thread(target=work) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return time.perf_counter() - started
        one_started = time.perf_counter()
        with memory.internals.db.read() as snapshot:
            for query in queries[:20]:
                cache.scores(snapshot, space, table, [NS], query, shortlist=3000,
                             exact_up_to=20_000)
        one = time.perf_counter() - one_started
        out["four_threads_vs_one_ratio"] = four(20) / one
        # A near-duplicate check of a 1,000-row write, against the same store.
        kwargs: dict[str, Any] = {}
        if "mirror" in inspect.signature(NearDuplicates).parameters:
            kwargs = {"mirror": cache, "db": memory.internals.db}
        hook = NearDuplicates(memory.internals.store, memory.settings.model_copy(
            update={"near_duplicate_policy": "link"}), lambda: space, lambda: "bench", **kwargs)
        batch = [NewRow(namespace=NS, kind="note", content=f"new note {i}") for i in range(1000)]
        vectors = unit(rng, 1000)
        started = time.perf_counter()
        if hasattr(hook, "prepare"):
            hook.prepare(batch)
        with memory.internals.db.write() as tx:
            written = []
            for i, row in enumerate(batch):
                rowid, memory_id = memory.internals.store.insert(tx, row)
                written.append(Written(rowid, memory_id, row, i))
            memory.internals.tables.insert(tx, space, [(w.rowid, NS, vectors[w.index])
                                                    for w in written],
                                        clock.format_time(clock.now()))
            hook(tx, written, vectors)
        out["near_duplicate_check_s"] = time.perf_counter() - started
        out["rss_after_near_duplicates_mb"] = rss_mb()
        out["peak_rss_mb"] = peak_mb()
        del conn
    for key, value in out.items():
        print(f"{key:32s} {value:.2f}" if isinstance(value, float) else f"{key:32s} {value}")
    if args.json:
        write_json(args.json, out)


if __name__ == "__main__":
    main()
