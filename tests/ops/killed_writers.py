"""Writers killed with SIGKILL at random points, and the check after each kill that the
store is sound and holds every write a writer had seen acknowledged: shared by the plain
store's test (tests/ops/test_crash.py) and the encrypted one's
(tests/encryption/test_load_crash.py).

The writer runs keyword-only (AIDE_MEMOIRE_EMBEDDING_MODEL=none in the caller's env):
what is under test is SQLite's atomic commit under a hard kill, which the dense vectors
share (they are written in the same transaction); loading the model in each of 15 writers
would cost ~10 s each.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from aide_memoire import Memory

__all__ = ["KILLS", "WRITER", "kill_writers_at_random"]

KILLS = 15

WRITER = textwrap.dedent(
    """
    import random, sys
    from aide_memoire import Memory
    home, round_ = sys.argv[1], int(sys.argv[2])
    rng = random.Random(round_)
    with Memory(home) as m:
        print("open", flush=True)
        i = 0
        while True:
            i += 1
            pick = rng.random()
            if pick < 0.5:
                ids = [m.store(f"round {round_} note {i}: the cache warms at deploy",
                               namespace="crash", tags=["r%d" % round_],
                               metadata={"i": i})]
            elif pick < 0.8:
                ids = m.store_many([{"content": f"round {round_} batch {i} item {k}"}
                                    for k in range(rng.randint(2, 40))], namespace="crash")
            else:
                ids = m.store_conversation(
                    [{"speaker": "Ana", "content": f"round {round_} turn {i} a"},
                     {"speaker": "Bo", "content": f"round {round_} turn {i} b"}],
                    namespace="crash", session_id=f"s{round_}")
            for memory_id in ids:
                print(memory_id, flush=True)
    """
)


def kill_writers_at_random(
    home: Path, env: Mapping[str, str], seed: int, open_memory: Callable[[], Memory],
    check: Callable[[Memory], None] = lambda memory: None,
) -> list[str]:
    """Start a writer on ``home`` KILLS times, kill it at a random moment, and after each
    kill open the store with ``open_memory``: integrity, doctor and every acknowledged id
    present, then ``check``. Returns the ids acknowledged over all rounds."""
    rng = random.Random(seed)
    acknowledged: list[str] = []
    for round_ in range(KILLS):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home), str(round_)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(env),
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "open"
        time.sleep(rng.uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        # A line cut by the kill was never fully acknowledged: keep whole ids only.
        acknowledged += [line for line in out.splitlines() if len(line) == 32]
        with open_memory() as memory:
            conn = memory.internals.db.conn()
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            report = memory.doctor()
            assert report.healthy, [c for c in report.checks if not c.ok]
            present = {r.id for r in memory.internals.store.iter_namespace(conn, "crash")}
            lost = [i for i in acknowledged if i not in present]
            assert not lost, f"round {round_}: {len(lost)} acknowledged writes lost"
            check(memory)
    assert len(set(acknowledged)) > KILLS  # the writers really wrote between kills
    return acknowledged
