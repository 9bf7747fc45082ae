"""migrate-store rate: a generated SQLite store copied into PostgreSQL and back (rows/s).

The store is made through ``Memory`` (keyword-only, scale.py's generated notes in 50
namespaces), then every memory gets a 384-d float32 vector in a real sqlite-vec space
(random unit vectors: the copy moves bytes, what they mean does not matter here). A
private PostgreSQL (pgserver) is the target; each direction is one ``migrate_store`` call,
verified as always (counts and hashes), and timed per table from its progress reports.

    .venv/bin/python bench/migrate_store.py --memories 100000 --json bench/results/migrate.json
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, table, write_json  # noqa: E402
from aide_memoire import Memory  # noqa: E402
from aide_memoire.engine.core import clock  # noqa: E402
from aide_memoire.engine.core.settings import Settings  # noqa: E402
from aide_memoire.engine.recall.embed import EmbeddingSpace  # noqa: E402
from aide_memoire.engine.storage.driver import load_driver  # noqa: E402
from aide_memoire.engine.storage.transfer import migrate_store  # noqa: E402
from scale import make_item  # noqa: E402


def build(home: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    settings = Settings.from_env(home=home, embedding_model="none", extract_facts=False)
    with Memory(settings=settings) as memory:
        for start in range(0, count, 1000):
            by_namespace: dict[str, list[dict[str, Any]]] = {}
            for number in range(start, min(count, start + 1000)):
                item = make_item(rng, number)
                by_namespace.setdefault(f"project:n{number % 50}", []).append(
                    {"content": item["content"], "tags": item["tags"]})
            for namespace, items in by_namespace.items():
                memory.store_many(items, namespace=namespace)
        space = EmbeddingSpace(model="bench-random-vectors", dim=384)
        vectors = np.random.default_rng(seed).standard_normal((count, 384), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with memory.internals.db.write() as tx:
            rows = tx.execute("SELECT rowid, namespace FROM memories ORDER BY rowid").fetchall()
            with_vectors = [(int(r), str(ns), vectors[i]) for i, (r, ns) in enumerate(rows)]
            memory.internals.tables.insert(tx, space, with_vectors, clock.format_time(clock.now()))


class Timer:
    """Seconds and rows per table, from migrate_store's progress reports."""

    def __init__(self) -> None:
        self.tables: dict[str, list[float]] = {}

    def __call__(self, what: str, done: int, _total: int) -> None:
        now = time.perf_counter()
        if what not in self.tables:
            self.tables[what] = [now, now, 0.0]
        self.tables[what][1:] = [now, float(done)]

    def rows(self) -> list[list[Any]]:
        return [[name, int(rows), round(end - start, 2)]
                for name, (start, end, rows) in self.tables.items() if rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
    base = Path(tempfile.mkdtemp(prefix="aide-bench-migrate-"))
    server = pgserver.get_server(  # type: ignore[attr-defined]
        base / "pgdata", cleanup_mode="delete")
    try:
        server.psql("CREATE DATABASE bench;")
        url = server.get_uri("bench")
        started = time.perf_counter()
        build(base / "home", args.memories, args.seed)
        built = time.perf_counter() - started
        driver = load_driver()
        results: dict[str, Any] = {"memories": args.memories, "build_s": round(built, 1)}
        for direction, source, target in (
            ("sqlite_to_postgres", str(base / "home" / "memory.db"), url),
            ("postgres_to_sqlite", url, str(base / "back" / "memory.db")),
        ):
            timer = Timer()
            report = migrate_store(source, target, driver=driver, progress=timer)
            if not report.ok:
                raise SystemExit(f"{direction}: {report.problem}")
            results[direction] = {
                "seconds": report.seconds, "rows": report.rows,
                "rows_per_second": report.rows_per_second,
                "memories_per_second": round(args.memories / report.seconds, 1),
                "tables": {name: {"rows": rows, "seconds": s} for name, rows, s in timer.rows()},
            }
            print(f"\n{direction}: {report.rows} rows in {report.seconds:.1f} s "
                  f"({report.rows_per_second:.0f} rows/s, "
                  f"{args.memories / report.seconds:.0f} memories/s)")
            print(table(["table", "rows", "seconds"], timer.rows()))
        write_json(args.json, {"bench": "migrate_store", "machine": machine(), **results})
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
