"""One process of test_memory_concurrency: ``python memory_writer.py URL HOME WORKER COUNT``.

Stores ``COUNT`` notes through ``Memory`` (keyword-only, facts off) into the PostgreSQL
store at URL, from its own data home (as another machine would), and recalls each one
right after writing it. Prints one JSON line: the ids it wrote, how many of them its own
recall found at once, and when it wrote its first and last note.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from aide_memoire import Memory, Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.postgres.gate import wait_at_gate  # noqa: E402


def main() -> None:
    url, home, worker, count = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    # Facts on, as by default: the processes also race on entities, facts and terms.
    settings = Settings.from_env(home=home, database_url=url, embedding_model="none")
    ids: list[str] = []
    found = 0
    mem = Memory(settings=settings)
    try:
        wait_at_gate(mem.internals.db.conn())
        first = time.time()
        for i in range(count):
            # Names every process mentions: they race on the same entities and edges.
            memory_id = mem.store(
                f"worker{worker} wrote entry{i} in the shared ledger for Alice Martin at Acme",
                namespace="project:shared", tags=[f"w{worker}"])
            ids.append(memory_id)
            hits = mem.recall(f"worker{worker} entry{i} ledger", namespace="project:shared",
                              limit=5)
            found += memory_id in {h.id for h in hits}
        last = time.time()
    finally:
        mem.close()
    print(json.dumps({"ids": ids, "found": found, "first": first, "last": last}))


if __name__ == "__main__":
    main()
