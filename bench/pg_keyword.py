"""PostgreSQL keyword tail: recall and keyword-search latency on a large keyword-only store.

The store is filled with bench/scale.py's items (same generator, one namespace) without
the write pipeline: each row through the memories repository's own INSERT, its keyword
document and postings from the engine's own functions (``fts_document``,
``document_postings``), written in batches. It holds what the pipeline would index for
those rows; no vectors, no audit events (recall does not read them). That reaches 100k
rows here in ~20 minutes under load, where the pipeline wrote ~17 rows/s under the same
load. Then ``--queries`` recall queries (scale.py's ``make_query``, each aimed at one
memory) are timed, with the time of their keyword searches apart. The slowest searches
are printed with their FTS5 expression: run them under EXPLAIN ANALYZE to see why.

    .venv/bin/python bench/pg_keyword.py --memories 100000 --queries 300 \\
        --json bench/results/pg_keyword.json
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import psycopg  # noqa: E402
from pydantic import SecretStr  # noqa: E402

import _pg  # noqa: E402
import scale  # noqa: E402
from _common import machine, percentile, table, write_json  # noqa: E402
from aide_memoire import Memory  # noqa: E402
from aide_memoire.engine.core.compose import fts_document  # noqa: E402
from aide_memoire.engine.core.settings import Settings  # noqa: E402
from aide_memoire.engine.storage.filter import RowFilter  # noqa: E402
from aide_memoire.engine.storage.postgres.keyword_tokens import document_postings  # noqa: E402
from aide_memoire.engine.storage.rows import NewRow, indexed  # noqa: E402

NS = "bench-0"


def fill(memory: Memory, count: int, seed: int, batch: int = 5000) -> list[dict[str, Any]]:
    """``count`` scale.py items stored and keyword-indexed; the items, in rowid order."""
    rng = random.Random(seed)
    store = memory.internals.context.store
    items: list[dict[str, Any]] = []
    while len(items) < count:
        size = min(batch, count - len(items))
        chunk = [scale.make_item(rng, len(items) + i) for i in range(size)]
        docs: list[tuple[int, str, int]] = []
        postings: list[tuple[str, str, int, str, str]] = []
        with memory.internals.db.write() as tx:
            for item in chunk:
                row = NewRow(namespace=NS, kind="note", content=item["content"],
                             tags=list(item["tags"]))
                rowid, _ = store.insert(tx, row, index=False)
                found, length = document_postings(fts_document(indexed(row)))
                docs.append((rowid, NS, length))
                postings += [(p.term, NS, rowid, "{" + ",".join(map(str, p.freqs)) + "}",
                              "{" + ",".join(map(str, p.places)) + "}") for p in found]
            tx.executemany(
                "INSERT INTO keyword_docs (rowid, namespace, length) VALUES (?, ?, ?)", docs)
            tx.executemany(
                "INSERT INTO keyword_postings (term, namespace, rowid, freqs, places) "
                "VALUES (?, ?, ?, ?::integer[], ?::integer[])", postings)
        items += chunk
        print(f"{len(items)} stored", file=sys.stderr, flush=True)
    return items


def measure(memory: Memory, items: Sequence[dict[str, Any]], queries: int,
            seed: int) -> dict[str, Any]:
    """Recall times, their keyword searches' times, hit@10 and the slowest searches."""
    store = memory.internals.context.store
    searched: list[tuple[str, float]] = []
    search = store.keyword_search

    def timed(conn: Any, match: str, where: RowFilter, limit: int | None,
              weights: Sequence[float]) -> list[tuple[int, float]]:
        started = time.perf_counter()
        found = search(conn, match, where, limit, weights)
        searched.append((match, (time.perf_counter() - started) * 1000))
        return found

    store.keyword_search = timed  # type: ignore[method-assign]
    with memory.internals.db.read() as conn:
        ids = [str(i) for (i,) in conn.execute(
            "SELECT id FROM memories WHERE namespace = ? ORDER BY rowid", (NS,))]
    rng = random.Random(seed)
    recall_ms, keyword_ms, hits = [], [], 0
    slow: list[tuple[str, float]] = []  # each query's slowest keyword search
    for _ in range(queries):
        k = rng.randrange(len(ids))
        query = scale.make_query(rng, items[k])
        searched.clear()
        started = time.perf_counter()
        found = memory.recall(query, namespace=NS, limit=10)
        recall_ms.append((time.perf_counter() - started) * 1000)
        keyword_ms += [ms for _, ms in searched]
        hits += ids[k] in [h.id for h in found]
        if searched:
            slow.append(max(searched, key=lambda s: s[1]))
    worst = sorted(slow, key=lambda s: -s[1])[:5]
    return {
        "recall_p50_ms": percentile(recall_ms, 50), "recall_p95_ms": percentile(recall_ms, 95),
        "recall_p99_ms": percentile(recall_ms, 99),
        "keyword_p50_ms": percentile(keyword_ms, 50),
        "keyword_p95_ms": percentile(keyword_ms, 95),
        "keyword_p99_ms": percentile(keyword_ms, 99),
        "hit_at_10": hits / queries, "slowest": [{"match": m, "ms": ms} for m, ms in worst],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--database-url", default=None,
                        help="an existing server (its role needs CREATEDB); by default a "
                             "pgserver in a temporary directory")
    parser.add_argument("--json", dest="json_path", type=Path, default=None)
    args = parser.parse_args()
    with _pg.server_url(args.database_url) as admin, _pg.fresh_database(admin) as url, \
            tempfile.TemporaryDirectory(prefix="aide-pgkw-") as tmp:
        settings = Settings(home=Path(tmp) / "home", embedding_model="none",
                            extract_facts=False, database_url=SecretStr(url))
        with Memory(settings=settings) as memory:
            started = time.perf_counter()
            items = fill(memory, args.memories, args.seed)
            fill_s = time.perf_counter() - started
            # A settled store, as autovacuum leaves one: statistics for the planner, and
            # pages marked all-visible so that key-only reads need no heap page.
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("VACUUM ANALYZE")
            row = {"memories": args.memories, "fill_s": fill_s,
                   **measure(memory, items, args.queries, args.seed + 1)}
    slowest = row.pop("slowest")
    print(table(list(row), [list(row.values())]))
    for entry in slowest:
        print(f"{entry['ms']:8.1f} ms  {entry['match']}")
    write_json(args.json_path, {"benchmark": "pg_keyword", "machine": machine(),
                                "results": [{**row, "slowest": slowest}]})


if __name__ == "__main__":
    main()
