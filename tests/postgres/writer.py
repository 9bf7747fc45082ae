"""One writer process of test_concurrency: ``python writer.py URL WORKER COUNT``.

Each transaction does what makes concurrent writers collide in the engine: inserts a
memory and its keyword document, bumps the namespace's shared size row, and appends to
a chain (read the head, write head + 1) as the audit log does; then it searches. Prints
one JSON line: how many writes, searches and retries it made, and when it wrote its
first and last row (to show the writers overlapped).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from aide_memoire.engine.storage.postgres import (  # noqa: E402
    PgConnection,
    PostgresDatabase,
    keyword_search,
)
from tests.postgres.gate import wait_at_gate  # noqa: E402
from tests.postgres.rows import insert_memory  # noqa: E402


def main() -> None:
    url, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    attempts = 0
    searches = 0
    with PostgresDatabase(url) as db:
        wait_at_gate(db.conn())
        first = time.time()
        for i in range(count):
            def write(tx: PgConnection, i: int = i) -> None:
                nonlocal attempts
                attempts += 1
                insert_memory(tx, "project:shared", f"worker{worker} write{i} shared ledger")
                tx.execute(
                    "INSERT INTO namespace_sizes (namespace, count, sum_log, sum_log_sq) "
                    "VALUES ('project:shared', 1, 0, 0) ON CONFLICT (namespace) "
                    "DO UPDATE SET count = namespace_sizes.count + 1"
                )
                head = tx.execute("SELECT seq FROM audit_head WHERE id = 1").fetchone()
                seq = (int(head[0]) if head else 0) + 1
                tx.execute(
                    "INSERT INTO audit_head (id, seq, hash) VALUES (1, ?, ?) ON CONFLICT (id) "
                    "DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
                    (seq, f"w{worker}-{i}"),
                )
                tx.execute(
                    "INSERT INTO audit_events (seq, at, actor, action, prev_hash, hash) "
                    "VALUES (?, 't', ?, 'store', '', ?)",
                    (seq, f"worker{worker}", f"w{worker}-{i}"),
                )

            db.transact(write)
            with db.read() as conn:
                if keyword_search(conn, ["ledger"], ["project:shared"], limit=5):
                    searches += 1
        last = time.time()
    print(json.dumps({
        "writes": count, "searches": searches, "retries": attempts - count,
        "first": first, "last": last,
    }))


if __name__ == "__main__":
    main()
