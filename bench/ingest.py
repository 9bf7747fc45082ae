"""Ingest alone: LOCOMO conversations stored session by session, wall and CPU time;
and ``store_many``'s rate by store size.

    python bench/ingest.py PATH/locomo-dev.json [--extract on|off] [--json out.json]
    python bench/ingest.py --sizes 1000,100000 [--batch 100 --probe 500] [--json out.json]
    python bench/ingest.py --parts 100000,1000000 [--json out.json]

The same writes as ``bench/locomo.py`` (``store_conversation`` per session, photo
captions in the text) without the recall part. Besides turns per wall second it reports
turns per CPU second of the whole process (the model's thread pool included), which
another process's load on a shared machine moves far less, and the share of wall time
spent in the dense encoder. One session is stored first in a namespace of its own, so
that imports and first-call work are not counted. To compare two versions of the code,
run both at the same moment (``PYTHONPATH`` at each one's ``server`` folder).

``--sizes`` grows one namespace of bench/scale.py's generated notes to each size with
the bulk loader (bench/_bulk.py: composed vectors, no pipeline), then stores ``--probe``
new notes with ``store_many`` in batches of ``--batch`` (the whole pipeline, the model
included) and reports, per size, notes per wall and CPU second and the thread CPU of
each stage per note: the encoder, each after-write hook (near duplicates, facts), the
rest. A write whose cost does not grow with the store keeps the same figures at every
size; the ratio to the smallest size is printed.

``--parts`` measures the parts of a write that could grow with the store, alone and
without the model, at each size: the near-duplicate check of a batch of 100 (the full
scan and the codes kept in the store, CPU and pairs found; stored rows are topic mixtures, unit
vectors sharing structure as one namespace's texts do), one audit event with that many
events in the log, and the facts pairing's candidate query with that many term rows;
then the same check in a crowded namespace (rows of 12 topics) for duplicates of its
oldest tenth: how often the bound on a bucket's rows loses the row duplicated.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bulk import Composer, bulk_write, item_rng  # noqa: E402
from _common import machine, percentile, progress, write_json  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402
from locomo import parse_date, sessions, turn_text  # noqa: E402
from scale import TEMPLATES, make_item  # noqa: E402

Session = tuple[str, str, Any, list[dict[str, Any]]]  # namespace, session id, date, turns


def _sessions(samples: list[dict[str, Any]]) -> list[Session]:
    out: list[Session] = []
    for sample in samples:
        for number, date, turns in sessions(sample["conversation"]):
            if turns:
                out.append((f"locomo:{sample['sample_id']}", f"session_{number}",
                            parse_date(date), turns))
    return out


def _store(memory: Memory, session: Session, namespace: str | None = None) -> int:
    name, session_id, date, turns = session
    batch = [{"speaker": t["speaker"], "content": turn_text(t),
              "metadata": {"dia_id": t["dia_id"]}} for t in turns]
    memory.store_conversation(batch, namespace=namespace or name, session_id=session_id,
                              observed_at=date)
    return len(batch)


def _timed(call: Callable[..., Any], spent: list[float], *,
           clock: Callable[[], float] = time.perf_counter) -> Callable[..., Any]:
    def run(*args: Any) -> Any:
        started = clock()
        try:
            return call(*args)
        finally:
            spent.append(clock() - started)
    return run


def _stage_clocks(memory: Memory) -> dict[str, list[float]]:
    """Thread CPU seconds of the encoder and of each after-write hook, per call."""
    spent: dict[str, list[float]] = {"encode": []}
    embedder = memory.internals.embedder
    embedder.encode = _timed(embedder.encode, spent["encode"], clock=time.thread_time)  # type: ignore[method-assign]
    pipeline = memory.internals.context.pipeline
    for name, hook in list(pipeline.after_write):
        spent[name] = []
        if hasattr(hook, "apply"):
            hook.apply = _timed(hook.apply, spent[name], clock=time.thread_time)
        else:
            pipeline.replace_hook(name, _timed(hook, spent[name], clock=time.thread_time))
    return spent


def run_sizes(home: Path, sizes: list[int], *, batch: int, probe: int, seed: int = 28,
              extract: bool = True) -> dict[str, Any]:
    """``store_many`` of ``probe`` new notes at each store size (see the module)."""
    namespace = "bench"
    rows: list[dict[str, Any]] = []
    with Memory(settings=Settings(home=home, extract_facts=extract)) as memory:
        memory.internals.embedder.wait()
        composer = Composer(memory, TEMPLATES, seed)
        memory.store_many([{"content": "warm up the write path"}], namespace="warmup")
        spent = _stage_clocks(memory)
        count = 0
        for size in sizes:
            while count < size - probe - 10:  # the bulk part: composed vectors, no pipeline
                items = [make_item(item_rng(seed, n), n)
                         for n in range(count, min(size - probe - 10, count + 5000))]
                count += len(bulk_write(memory, items, [namespace] * len(items),
                                        composer.vectors(items)))
            # One small write first: the rows just bulk-loaded enter the vector mirror
            # (a one-off load a long-running process pays once, not a write's cost).
            # It also codes those rows for the near-duplicate check (once per store).
            warm = [make_item(item_rng(seed, n), n) for n in range(count, count + 10)]
            warm_wall, warm_cpu = time.perf_counter(), time.thread_time()
            memory.store_many([{"content": it["content"], "tags": it["tags"]} for it in warm],
                              namespace=namespace)
            warm_wall, warm_cpu = time.perf_counter() - warm_wall, time.thread_time() - warm_cpu
            count += len(warm)
            for part in spent.values():
                part.clear()
            rates: list[float] = []
            wall, cpu, written = time.perf_counter(), time.thread_time(), 0
            while count < size:
                items = [make_item(item_rng(seed, n), n)
                         for n in range(count, min(size, count + batch))]
                started = time.perf_counter()
                memory.store_many([{"content": it["content"], "tags": it["tags"]}
                                   for it in items], namespace=namespace)
                rates.append(len(items) / (time.perf_counter() - started))
                count += len(items)
                written += len(items)
            wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
            stages = {name: 1000 * sum(part) / written for name, part in spent.items()}
            stages["rest"] = 1000 * cpu / written - sum(stages.values())
            rows.append({"size": size, "notes": written, "notes_per_s": written / wall,
                         "batch_per_s_p50": percentile(rates, 50),
                         "notes_per_thread_cpu_s": written / cpu,
                         "cpu_ms_per_note": stages, "warm_write_s": warm_wall,
                         "warm_write_thread_cpu_s": warm_cpu, "load_average": os.getloadavg()})
    first = rows[0]
    for row in rows:
        row["rate_vs_first"] = row["notes_per_s"] / first["notes_per_s"]
        row["cpu_rate_vs_first"] = row["notes_per_thread_cpu_s"] / first["notes_per_thread_cpu_s"]
    return {"bench": "ingest_by_size", "machine": machine(), "batch": batch, "probe": probe,
            "extract": "on" if extract else "off", "sizes": rows}


def run(path: Path, home: Path, *, extract: bool, limit: int | None = None) -> dict[str, Any]:
    samples = json.loads(path.read_text(encoding="utf-8"))[:limit]
    todo = _sessions(samples)
    settings = Settings(home=home, extract_facts=extract)
    encode_seconds: list[float] = []
    per_session_ms: list[float] = []
    with Memory(settings=settings) as memory:
        memory.internals.embedder.wait()
        _store(memory, todo[0], namespace="warmup")
        memory.internals.embedder.encode = _timed(memory.internals.embedder.encode, encode_seconds)  # type: ignore[method-assign]
        turns = 0
        wall, cpu = time.perf_counter(), time.process_time()
        for session in progress(todo, desc="sessions"):
            started = time.perf_counter()
            turns += _store(memory, session)
            per_session_ms.append((time.perf_counter() - started) * 1000)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        runtime = memory.internals.embedder.runtime
    return {
        "bench": "ingest", "machine": machine(), "load_average": os.getloadavg(),
        "extract": "on" if extract else "off", "runtime": runtime,
        "sessions": len(todo), "turns": turns, "wall_s": wall, "cpu_s": cpu,
        "turns_per_s": turns / wall, "turns_per_cpu_s": turns / cpu,
        "encode_share": sum(encode_seconds) / wall,
        "session_ms_p50": percentile(per_session_ms, 50),
        "session_ms_p95": percentile(per_session_ms, 95),
    }


def _mixture(rng: Any, n: int, topics: Any = None) -> Any:
    """Unit vectors mixing 3 topics plus noise (see --parts): of 300 drawn afresh, or
    of the ``topics`` given (a few of them: a crowded namespace)."""
    import numpy as np

    if topics is None:
        topics = rng.standard_normal((300, 384)).astype(np.float32)
        topics /= np.linalg.norm(topics, axis=1, keepdims=True)
    weights = rng.exponential(size=(n, 3)).astype(np.float32)
    mixed = (topics[rng.integers(0, len(topics), size=(n, 3))] * weights[..., None]).sum(axis=1)
    mixed += 0.03 * rng.standard_normal((n, 384)).astype(np.float32)
    out = mixed / np.linalg.norm(mixed, axis=1, keepdims=True)
    return out.astype(np.float32)


def _near_cost(n: int, rng: Any, db: Any, *, crowd: int = 0) -> dict[str, Any]:
    """The check of 50 near duplicates of stored rows and 50 new rows, by the scan and by
    the codes. With ``crowd`` the rows mix that few topics and the duplicated rows are
    the oldest tenth: whether a bucket's bound loses an old row among many newer ones."""
    import numpy as np

    from aide_memoire.engine.lifecycle.dedup import DEDUP_KINDS
    from aide_memoire.engine.lifecycle.near_codes import StoredCodes
    from aide_memoire.engine.recall.mirror import _Slice

    topics = None
    if crowd:
        topics = rng.standard_normal((crowd, 384)).astype(np.float32)
        topics /= np.linalg.norm(topics, axis=1, keepdims=True)
    found = _Slice(384)
    for start in range(0, n, 16_384):
        rows = _mixture(rng, min(16_384, n - start), topics)
        found.append([(start + i + 1, v.tobytes(), None, None, "note")
                      for i, v in enumerate(rows)], None)
    picked = rng.choice(max(50, n // 10) if crowd else n, 50, replace=False)
    base = np.vstack([found.view.vectors.rows(int(i), int(i) + 1) for i in picked])
    base = base.astype(np.float32) / np.linalg.norm(base.astype(np.float32), axis=1,
                                                    keepdims=True)
    noise = rng.standard_normal(base.shape).astype(np.float32)
    noise -= (noise * base).sum(axis=1, keepdims=True) * base
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    cosine = rng.uniform(0.92, 0.99, size=(50, 1)).astype(np.float32)
    batch = np.vstack([base * cosine + noise * np.sqrt(1 - cosine**2),
                       _mixture(rng, 50, topics)])
    codes = StoredCodes(DEDUP_KINDS)
    space = f"bench-{n}-{crowd}"  # a slice of its own per size
    cpu = time.process_time()
    with db.write() as tx:
        slice_id = codes.catch_up(tx, space, "ns", found, None, n + 1)
    assert slice_id is not None  # a mirror slice was given
    build = time.process_time() - cpu
    conn = db.conn()
    codes.similar(conn, slice_id, found, batch[:1], 0.92, 2**62)  # statement cache warm
    cpu = time.process_time()
    got = codes.similar(conn, slice_id, found, batch, 0.92, 2**62)
    index_s = time.process_time() - cpu
    cpu = time.process_time()
    want = found.similar(batch, 0.92, 2**62, DEDUP_KINDS)
    scan_s = time.process_time() - cpu
    pairs = {(j, r) for j, r, _ in want}
    by_codes = pairs & {(j, r) for j, r, _ in got}
    sources = {(j, int(i) + 1) for j, i in enumerate(picked.tolist())}  # rowid = index + 1
    return {"near_scan_cpu_s": scan_s, "near_codes_cpu_s": index_s,
            "near_codes_catch_up_cpu_s": build, "near_pairs_scan": len(pairs),
            "near_pairs_codes": len(by_codes), "near_sources_scan": len(sources & pairs),
            "near_sources_codes": len(sources & by_codes)}


def run_parts(home: Path, sizes: list[int]) -> dict[str, Any]:
    """The parts of a write that could grow with the store (see --parts)."""
    import numpy as np

    from aide_memoire.engine.trust import audit

    rng = np.random.default_rng(28)
    rows: list[dict[str, Any]] = []
    sql = " UNION ALL ".join(
        f"SELECT * FROM (SELECT memory_rowid FROM memory_terms WHERE namespace = ? AND "
        f"term = ? AND memory_rowid != ? ORDER BY memory_rowid DESC LIMIT 64) AS t{n}"
        for n in range(4))  # the shape of facts/updates.py's query
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        db = memory.internals.db
        events = terms = 0
        for size in sizes:
            row: dict[str, Any] = {"size": size, **_near_cost(size, rng, db)}
            row["crowded_old"] = _near_cost(size, rng, db, crowd=12)
            with db.write() as tx:
                for n in range(events, size):
                    audit.append_event(tx, actor="bench", action="store", namespace="b",
                                       memory_id=f"m{n}", detail={"n": n})
                tx.executemany("INSERT INTO memory_terms (namespace, term, memory_rowid) "
                               "VALUES (?, ?, ?)", (("b", f"t{r % 10}", r)
                                                    for r in range(terms, size)))
            events = terms = size
            cpu = time.process_time()
            with db.write() as tx:
                for n in range(1000):
                    audit.append_event(tx, actor="bench", action="store", namespace="b",
                                       memory_id=f"x{size}-{n}", detail={"n": n})
            events += 1000
            row["audit_us_per_event"] = 1000 * (time.process_time() - cpu)
            conn = db.conn()
            cpu = time.process_time()
            for _ in range(500):
                conn.execute(sql, [v for t in range(4) for v in ("b", f"t{t}", -1)]).fetchall()
            row["pairing_query_us"] = 2000 * (time.process_time() - cpu)
            row["load_average"] = os.getloadavg()
            rows.append(row)
    return {"bench": "ingest_parts", "machine": machine(), "sizes": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path, nargs="?", default=None,
                        help="LOCOMO JSON file (e.g. locomo-dev.json)")
    parser.add_argument("--sizes", default=None,
                        help="instead: store_many's rate at these store sizes (e.g. 1000,100000)")
    parser.add_argument("--parts", default=None,
                        help="instead: the near-duplicate check, audit append and pairing "
                        "query alone at these sizes (no model)")
    parser.add_argument("--batch", type=int, default=100, help="--sizes: store_many batch")
    parser.add_argument("--probe", type=int, default=500,
                        help="--sizes: notes stored by store_many at each size")
    parser.add_argument("--extract", choices=["on", "off"], default="on",
                        help="fact and entity extraction on write (the extract_facts setting)")
    parser.add_argument("--conversations", type=int, default=None,
                        help="only the first N conversations (default: all)")
    parser.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = parser.parse_args()
    if args.parts:
        with tempfile.TemporaryDirectory() as tmp:
            parts = run_parts(Path(tmp), sorted(int(x) for x in args.parts.split(",")))
        for row in parts["sizes"]:
            print(f"{row['size']:>9,}: near duplicates of 100 new rows: scan "
                  f"{row['near_scan_cpu_s']:.3f} s CPU, "
                  f"stored codes {row['near_codes_cpu_s']:.3f} s "
                  f"(coded once per store {row['near_codes_catch_up_cpu_s']:.2f} s), pairs "
                  f"{row['near_pairs_codes']}/{row['near_pairs_scan']}; audit event "
                  f"{row['audit_us_per_event']:.0f} us; pairing query "
                  f"{row['pairing_query_us']:.0f} us (load {row['load_average'][0]:.1f})")
            crowd = row["crowded_old"]
            print(f"{'':>11}crowded (12 topics), duplicates of the oldest tenth: the row "
                  f"duplicated found {crowd['near_sources_codes']}/{crowd['near_sources_scan']}"
                  f", pairs {crowd['near_pairs_codes']}/{crowd['near_pairs_scan']}, stored "
                  f"codes {crowd['near_codes_cpu_s']:.3f} s, scan {crowd['near_scan_cpu_s']:.3f} s")
        print(json.dumps(parts))
        write_json(args.json, parts)
        return
    if args.sizes:
        sizes = sorted(int(x) for x in args.sizes.split(","))
        with tempfile.TemporaryDirectory() as tmp:
            by_size = run_sizes(Path(tmp), sizes, batch=args.batch, probe=args.probe,
                                extract=args.extract == "on")
        for row in by_size["sizes"]:
            stages = ", ".join(f"{k} {v:.2f}" for k, v in row["cpu_ms_per_note"].items())
            print(f"{row['size']:>9,} memories: store_many {row['notes_per_s']:.1f} notes/s "
                  f"({row['rate_vs_first']:.2f}x), {row['notes_per_thread_cpu_s']:.1f} per "
                  f"thread CPU s ({row['cpu_rate_vs_first']:.2f}x); CPU ms per note: {stages} "
                  f"(load {row['load_average'][0]:.1f})")
        print(json.dumps(by_size))
        write_json(args.json, by_size)
        return
    if args.path is None:
        parser.error("give a LOCOMO file, or --sizes")
    with tempfile.TemporaryDirectory() as tmp:
        result = run(args.path, Path(tmp), extract=args.extract == "on",
                     limit=args.conversations)
    print(
        f"ingest ({result['runtime']}, extract {result['extract']}): {result['turns']} turns, "
        f"{result['turns_per_s']:.1f} turns/s wall, {result['turns_per_cpu_s']:.1f} per CPU "
        f"second; encoder {100 * result['encode_share']:.0f}% of wall; session p50 "
        f"{result['session_ms_p50']:.0f} ms, p95 {result['session_ms_p95']:.0f} ms "
        f"(load {result['load_average'][0]:.1f})"
    )
    print(json.dumps(result))
    write_json(args.json, result)


if __name__ == "__main__":
    main()
