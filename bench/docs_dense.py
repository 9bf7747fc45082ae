"""What ``docs_dense`` costs: indexing a docs folder with and without section vectors.

    python bench/docs_dense.py FOLDER [--json]

FOLDER (e.g. this repository's docs/) is copied to a temporary directory and indexed
twice, each time into a new store: once with ``docs_dense`` off and once on (code_dense
off both times, the default). For each: wall and CPU seconds of the first index, of a
re-index after one page's edit, and docs-search latency percentiles. CPU seconds are
this process's (the model's threads included), so they hold better than wall time on a
loaded machine; give ``uptime``'s load with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from aide_memoire import Memory, Settings
from aide_memoire.logs import configure_logging

QUERIES = ["how are secrets kept out of the store", "what happens when the model is missing",
           "how do I move my memories to another machine", "which settings change recall",
           "how is the hook told what to inject", "where are logs written"]


def _timed(fn: Any) -> tuple[Any, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def run(source: Path, dense: bool, tmp: Path) -> dict[str, Any]:
    root = tmp / f"docs-{dense}"
    shutil.copytree(source, root)
    settings = Settings(home=tmp / f"home-{dense}", docs_dense=dense)
    with Memory(settings=settings) as memory:
        memory.internals.embedder.wait()  # the model's load is not the index's cost
        first, wall, cpu = _timed(lambda: memory.code_index(root))
        page = sorted(root.rglob("*.md"))[0]
        with page.open("a", encoding="utf-8") as fh:
            fh.write("\n\n## Added by the bench\n\nOne more section to encode.\n")
        edited, edit_wall, edit_cpu = _timed(lambda: memory.code_index(root))
        ms = []
        for query in QUERIES * 3:
            started = time.perf_counter()
            memory.code_search(root, query, kind="docs")
            ms.append((time.perf_counter() - started) * 1000)
    ms.sort()
    return {"docs_dense": dense, "files": first.files, "chunks": first.chunks,
            "index_wall_s": round(wall, 2), "index_cpu_s": round(cpu, 2),
            "edit_reindex_wall_s": round(edit_wall, 2), "edit_reindex_cpu_s": round(edit_cpu, 2),
            "edit_reindexed_files": edited.indexed,
            "search_ms_p50": round(statistics.median(ms), 1),
            "search_ms_p95": round(ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("--json", action="store_true", help="print only the JSON document")
    args = parser.parse_args()
    configure_logging("warning")
    with tempfile.TemporaryDirectory() as tmp:
        rows = [run(args.source, dense, Path(tmp)) for dense in (False, True)]
    result = {"source": str(args.source), "load": os.getloadavg()[0], "runs": rows}
    if args.json:
        print(json.dumps(result))
        return
    for row in rows:
        print(" ".join(f"{k}={v}" for k, v in row.items()))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
