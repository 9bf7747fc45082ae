"""Eight processes mixing stores and recalls on one store: no write lost, no error seen.

Keyword-only (AIDE_MEMOIRE_EMBEDDING_MODEL=none) so that eight model loads do not
swamp a 2-core machine; the locking and transactions under test are the same.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from aide_memoire import Memory
from aide_memoire.engine.core.settings import Settings

ENV = {**os.environ, "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"}
PROCESSES = 8
OPS = 60

WORKER = textwrap.dedent(
    """
    import random, sys
    from aide_memoire import Memory
    home, tag, ops = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(tag)
    with Memory(home) as m:
        for i in range(ops):
            if rng.random() < 0.6:
                ids = m.store_many([{"content": f"worker {tag} fact {i}.{k} about the queue",
                                     "tags": [tag]} for k in range(rng.randint(1, 5))],
                                   namespace="load")
                for memory_id in ids:
                    print(memory_id, flush=True)
            else:
                m.recall(f"worker {rng.randint(0, 7)} fact queue", namespace="load")
    print("done", flush=True)
    """
)


def test_eight_processes_store_and_recall(home: Path) -> None:
    Memory(home, settings=Settings(home=home, embedding_model="none")).close()
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(home), f"w{n}", str(OPS)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        for n in range(PROCESSES)
    ]
    written: list[str] = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "Error" not in err and "locked" not in err, err
        lines = out.splitlines()
        assert lines[-1] == "done"
        written += lines[:-1]
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        assert memory.status().namespaces == {"load": len(set(written))}
        conn = memory.internals.db.conn()
        present = {r.id for r in memory.internals.store.iter_namespace(conn, "load")}
        assert set(written) == present
        assert memory.doctor().healthy
