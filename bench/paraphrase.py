"""Paraphrase recall: engineering learnings asked in other words, among generated distractors.

    python bench/paraphrase.py [--distractors 3000] [--seed 7] [--json FILE]

A second held-out signal beside LOCOMO, needing no data file: each learning below is
stated one way and asked another way (other words for the same thing, little shared
vocabulary), in eight classes (cause and fix, what a setting means, where a thing lives,
who owns what, a version pin, a performance finding, a gotcha, a decision and its
reason). They are stored among generated distractors that reuse the same tools and
words, in one namespace. Prints hit@1 / hit@10 / MRR for the keyword side alone, the
dense side alone and the fused recall (today's constants, and those before the
cross-validated ones). Nothing is tuned on this set.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, table, write_json  # noqa: E402
from _paired import paired, temporal_anywhere  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402
from aide_memoire.engine.recall.fusion import RecallTuning, fuse, prefer_timed  # noqa: E402
from aide_memoire.engine.recall.recaller import RecallRequest  # noqa: E402
from aide_memoire.engine.storage.store import RowFilter  # noqa: E402

# The fusion constants before the cross-validated ones (recall at commit c712472).
NOT_FOUND = 10**6
BEFORE = RecallTuning(keyword_weight=0.4, speaker_boost=0.2, timed_boost=0.0,
                      agreement_bonus=0.0, feedback_docs=0, feedback_weight=0.0,
                      keyword_scale="minmax", adaptive_keyword=0.0)
# The calibrated keyword scales (engine/recall/calibrate.py, off by default), at the keyword
# weight cross-validation chose for them on LOCOMO.
SCALED = RecallTuning(keyword_weight=0.55, keyword_scale="scaled", adaptive_keyword=0.0)
IDEAL = RecallTuning(keyword_weight=0.55, keyword_scale="ideal", adaptive_keyword=0.0)
# Query-adaptive fusion (issue #31): the keyword weight times the best keyword row's share
# of the ideal bm25, on and off at the engine's other defaults.
ADAPTIVE = replace(RecallTuning(), adaptive_keyword=1.0, session_weight=0.0,
                   recency_weight=0.0, named_weight=0.0, addressed_weight=0.0)
HALF = replace(ADAPTIVE, adaptive_keyword=0.5)
FIXED = replace(ADAPTIVE, adaptive_keyword=0.0)
# The defaults before issue 31's third round: a fixed keyword weight, and time words
# anywhere in a question making it a question about time (bench/_paired.py).
PREVIOUS = replace(RecallTuning(), adaptive_keyword=0.0, named_weight=0.0)

# Issue 31's fourth round: the second looks of query-adaptive fusion, and dense
# pseudo-relevance feedback (each (best rows, weight) retrieved on its own), at the defaults.
SIGNALS = ("agreement", "margin", "unnamed")
FEEDBACK = [(docs, weight) for docs in (3, 5) for weight in (0.5, 1.0)]
# What they are paired against: fusion alone at the defaults (as they are scored).
ONE_PASS = "fused, query-adaptive, full at half the ideal"
# Query-adaptive fusion on the "terms" coverage (issue 28, round 9; fusion alone, as ONE_PASS).
TERMS = "fused, coverage basis terms"

# (class, learning as stored, the question asked later)
LEARNINGS: list[tuple[str, str, str]] = [
    ("cause-fix", "The nightly ETL died because the Postgres connection pool ran dry; raising "
     "max_connections to 200 fixed it", "why did the overnight data load crash"),
    ("cause-fix", "Flaky checkout tests came from a shared Redis database between parallel "
     "workers; each worker now gets its own db index", "what made the basket specs fail at random"),
    ("cause-fix", "Images were blurry on retina screens because the CDN stripped the @2x "
     "variants; we now upload both sizes", "low resolution pictures on high density displays"),
    ("cause-fix", "The mobile app logged users out hourly since the refresh token was stored in "
     "memory only; it is persisted in the keychain now", "phones keep signing people off"),
    ("cause-fix", "Emails landed in spam until we added DKIM and SPF records for the sending "
     "domain", "outgoing messages were flagged as junk"),
    ("cause-fix", "Disk filled up on the build agents because Docker never pruned dangling "
     "layers; a weekly prune job runs now", "CI machines ran out of storage space"),
    ("setting", "Setting GOMAXPROCS to the container's CPU quota stopped the API from "
     "thrashing under Kubernetes limits", "go service throttled inside pods"),
    ("setting", "statement_timeout of 30s on the reporting role keeps runaway analytics "
     "queries from locking tables", "limit how long dashboard SQL may run"),
    ("setting", "The webpack option splitChunks all cut the first page load in half",
     "bundle configuration that made the initial render faster"),
    ("setting", "Nginx client_max_body_size must be 50m or large uploads get a 413",
     "big file transfers rejected by the reverse proxy"),
    ("setting", "JVM heap is pinned with -Xmx4g on the search nodes; without it the OOM killer "
     "takes them", "java memory ceiling on the indexing boxes"),
    ("setting", "Celery's prefetch multiplier is 1 so long tasks do not starve short ones",
     "background job workers grabbing too many jobs at once"),
    ("location", "Production secrets live in the ops vault under kv/prod, never in the repo",
     "where are the live credentials kept"),
    ("location", "The runbook for failing over the primary database is in the wiki page "
     "Disaster Recovery, section three", "instructions to switch to the replica"),
    ("location", "Feature flags are defined in config/flags.yaml and read at boot",
     "which file toggles experimental functionality"),
    ("location", "Grafana dashboards for payments sit in the Finance folder, owned by the "
     "billing squad", "charts about transactions and revenue"),
    ("location", "Terraform state for staging is in the S3 bucket infra-state-stg with DynamoDB "
     "locking", "where is the infrastructure snapshot for the test environment stored"),
    ("location", "Crash reports from the desktop client go to the Sentry project desk-electron",
     "error tracking for the laptop application"),
    ("owner", "Priya owns the authentication service and approves every change to login",
     "who signs off on sign-in modifications"),
    ("owner", "Questions about the data warehouse go to Tomasz; he designed the star schema",
     "who to ask about the analytics database model"),
    ("owner", "The on-call rotation for the edge proxy is run by the network team in Lisbon",
     "which group is paged when the load balancer misbehaves"),
    ("owner", "Mobile releases are cut by Aiko every second Thursday",
     "who ships the phone app builds and how often"),
    ("owner", "Legal must review any change to how we keep user IP addresses",
     "approval needed before altering visitor address retention"),
    ("owner", "Accessibility audits are handled by the design systems group",
     "who checks screen reader support"),
    ("version", "We stay on Python 3.11 until numba supports 3.12",
     "why have we not upgraded the interpreter"),
    ("version", "React is held at 17 because the charting library breaks on 18",
     "reason the frontend framework is not on the latest major"),
    ("version", "Node 20 is required for the new test runner; CI images were bumped",
     "javascript runtime minimum for the spec harness"),
    ("version", "Elasticsearch 7.17 is the last version our plugin compiles against",
     "highest search cluster release we can run"),
    ("version", "OpenSSL 3 broke the legacy SOAP client; it is pinned to 1.1 in that image",
     "old XML web service stopped working after a crypto library upgrade"),
    ("version", "Kubernetes 1.25 removed PodSecurityPolicy, so the cluster uses Kyverno rules",
     "replacement for the deprecated pod admission controls"),
    ("performance", "Adding a composite index on orders(customer_id, created_at) took the "
     "history page from 4 s to 80 ms", "speed up the purchase list for a client"),
    ("performance", "Batching the SQS sends in groups of ten cut the queue bill by 70 percent",
     "cheaper message publishing"),
    ("performance", "Gzip on the JSON API responses saved 60 percent of egress bandwidth",
     "compressing replies reduced outbound traffic"),
    ("performance", "The image resizer is CPU bound; moving it to libvips made it five times "
     "quicker", "thumbnail generation got much faster after switching library"),
    ("performance", "N+1 queries on the dashboard were removed with select_related, down from "
     "300 queries to 4", "too many database round trips on the overview screen"),
    ("performance", "Caching exchange rates for an hour removed most calls to the pricing "
     "vendor", "fewer requests to the currency provider"),
    ("gotcha", "Cron on the servers runs in UTC, so the 9am report actually fires at 10 in "
     "winter here", "scheduled job runs an hour late"),
    ("gotcha", "Bash set -e does not stop on a failure inside a pipeline without pipefail",
     "shell script kept going after a piped command broke"),
    ("gotcha", "Floats lose cents on invoices; amounts are stored as integer minor units",
     "rounding errors in money totals"),
    ("gotcha", "The staging SMTP relay delivers real mail, so test accounts use the sink "
     "domain", "test environment accidentally emailed customers"),
    ("gotcha", "Git on Windows rewrote line endings and broke the shell scripts until "
     ".gitattributes forced LF", "scripts failing with carriage return characters"),
    ("gotcha", "Daylight saving made the retention job delete a day twice; it now uses "
     "timestamps, not local dates", "clock change caused duplicate purging"),
    ("decision", "We chose Kafka over RabbitMQ because we need to replay a week of events",
     "why the streaming platform was picked instead of the classic broker"),
    ("decision", "GraphQL was rejected for the public API; partners wanted plain REST",
     "why external integrations do not use a query language endpoint"),
    ("decision", "Monorepo adopted in 2023 so that shared types change in one commit",
     "reason all services moved into a single repository"),
    ("decision", "Server-side rendering was dropped for the admin panel: SEO does not matter "
     "there", "why the back office renders in the browser"),
    ("decision", "We buy Auth0 instead of building login, to keep the team small",
     "why identity is outsourced to a vendor"),
    ("decision", "Feature branches live at most two days; longer work hides behind flags",
     "policy on how long unmerged work may stay open"),
]

_TOOLS = ["Postgres", "Redis", "Kafka", "Nginx", "Docker", "Terraform", "Grafana", "Sentry",
          "Celery", "webpack", "React", "Node", "Kubernetes", "Elasticsearch", "S3", "SQS",
          "the API", "the mobile app", "CI", "the dashboard", "cron", "Git", "the CDN",
          "OpenSSL", "the JVM", "Python", "the search nodes", "the build agents"]
_ACTS = ["restarted", "upgraded", "reviewed", "documented", "benchmarked", "patched",
         "migrated", "monitored", "profiled", "rolled back", "tagged", "load tested"]
_OBJECTS = ["the config", "the release notes", "the metrics", "the alert rules", "the logs",
            "the backup", "the schema", "the pipeline", "the test suite", "the permissions",
            "the queue", "the cache", "the certificates", "the cluster", "the image"]
_PEOPLE = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Gus", "Hana", "Ivan", "Jules"]
_WHEN = ["on Monday", "after standup", "during the sprint", "before the release",
         "last night", "in the retro", "this morning", "at the offsite"]
_FORMS = [
    "{person} {act} {object} of {tool} {when}.",
    "Note: {tool} {object} was {act} {when}; nothing else changed.",
    "{person} says {object} for {tool} should be {act} again {when}.",
    "Ticket: {act} {object} in {tool} (reported by {person}).",
    "{tool}: {object} {act} {when}, see the thread with {person}.",
]


def distractors(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < count:
        form = rng.choice(_FORMS)
        out.add(form.format(person=rng.choice(_PEOPLE), act=rng.choice(_ACTS),
                            object=rng.choice(_OBJECTS), tool=rng.choice(_TOOLS),
                            when=rng.choice(_WHEN)) + f" #{rng.randrange(10_000)}")
    return sorted(out)


def _rank(order: list[int], target: int) -> int | None:
    return next((i for i, r in enumerate(order, 1) if r == target), None)


def _figures(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks)
    return {
        "hit@1": sum(1 for r in ranks if r == 1) / n,
        "hit@10": sum(1 for r in ranks if r is not None and r <= 10) / n,
        "mrr": sum(1.0 / r for r in ranks if r is not None) / n,
    }


def run(count: int, seed: int, home: Path) -> dict[str, Any]:
    namespace = "paraphrase"
    with Memory(settings=Settings(home=home, extract_facts=False)) as memory:
        assert memory.internals.embedder.wait(), memory.internals.embedder.error
        started = time.perf_counter()
        memory.store_many([{"content": t, "kind": "note"} for t in distractors(count, seed)],
                          namespace=namespace)
        ids = memory.store_many([{"content": fact, "kind": "learning"}
                                 for _cls, fact, _q in LEARNINGS], namespace=namespace)
        seconds = time.perf_counter() - started
        conn = memory.internals.db.conn()
        rowid = {i: memory.internals.store.rowid_of(conn, i, namespace) for i in ids}
        text = {int(r): str(c) for r, c in conn.execute(
            "SELECT rowid, content FROM memories WHERE namespace = ?", (namespace,))}
        sides: dict[str, list[int | None]] = {
            "bm25": [], "dense": [], "fused, constants before": [],
            "fused": [], "fused, keyword 'scaled' (0.55)": [],
            "fused, keyword 'ideal' (0.55)": [],
            "fused, fixed keyword weight": [], "fused, query-adaptive keyword weight": [],
            "fused, query-adaptive, full at half the ideal": [],
            "fused, the previous defaults": [],
            **{f"fused, adaptive signal {a}": [] for a in SIGNALS},
            TERMS: [],
            **{f"{side}, dense feedback {d} x {w}": [] for d, w in FEEDBACK
               for side in ("dense", "fused")},
        }
        for memory_id, (_cls, _fact, question) in zip(ids, LEARNINGS, strict=True):
            target = rowid[memory_id]
            assert target is not None
            request = RecallRequest(query=question, where=RowFilter(namespaces=[namespace]),
                                    limit=10, pure=True)
            # Retrieved as the calibrated scales need (the ideal keyword score computed);
            # the candidates themselves do not depend on the scale.
            defaults = memory.internals.recaller.tuning
            # (and the held share the "terms" coverage reads, which no other side reads).
            memory.internals.recaller.tuning = replace(defaults, keyword_scale="scaled",
                                                       coverage_basis="terms")
            with memory.internals.db.read() as read:
                found = memory.internals.recaller.candidates(read, request)
            memory.internals.recaller.tuning = defaults
            earlier = replace(found, shape=replace(
                found.shape, temporal=temporal_anywhere(question)))
            previous = prefer_timed(fuse(earlier, PREVIOUS), earlier.shape, PREVIOUS,
                                    lambda rows: {r: text[r] for r in rows})
            for side, scores in (("bm25", found.keyword), ("dense", found.dense),
                                 ("fused, constants before", fuse(found, BEFORE)),
                                 ("fused, keyword 'scaled' (0.55)", fuse(found, SCALED)),
                                 ("fused, keyword 'ideal' (0.55)", fuse(found, IDEAL)),
                                 ("fused, fixed keyword weight", fuse(found, FIXED)),
                                 ("fused, query-adaptive keyword weight",
                                  fuse(found, ADAPTIVE)),
                                 ("fused, query-adaptive, full at half the ideal",
                                  fuse(found, HALF)),
                                 ("fused, the previous defaults", previous)):
                sides[side].append(_rank(sorted(scores, key=lambda r: (-scores[r], r)), target))
            for signal in SIGNALS:
                scores = fuse(found, replace(defaults, adaptive_signal=signal))
                sides[f"fused, adaptive signal {signal}"].append(
                    _rank(sorted(scores, key=lambda r: (-scores[r], r)), target))
            scores = fuse(found, replace(defaults, coverage_basis="terms"))
            sides[TERMS].append(_rank(sorted(scores, key=lambda r: (-scores[r], r)), target))
            for docs, weight in FEEDBACK:
                fed = replace(defaults, keyword_scale="scaled", dense_feedback_docs=docs,
                              dense_feedback_weight=weight)
                memory.internals.recaller.tuning = fed
                with memory.internals.db.read() as read:
                    again = memory.internals.recaller.candidates(read, request)
                memory.internals.recaller.tuning = defaults
                for side, scores in (("dense", again.dense), ("fused", fuse(again, fed))):
                    sides[f"{side}, dense feedback {docs} x {weight}"].append(
                        _rank(sorted(scores, key=lambda r: (-scores[r], r)), target))
            hits = memory.recall(question, namespace=namespace, limit=50, pure=True)
            sides["fused"].append(next((i for i, h in enumerate(hits, 1) if h.id == memory_id),
                                       None))
    ranks = {side: np.array([r or NOT_FOUND for r in found]) for side, found in sides.items()}
    return {
        "learnings": len(LEARNINGS),
        # The rule of docs/benchmarks.md (issue 31, third round), on these 48 questions.
        "paired": {"defaults against the previous defaults": paired(
                       ranks["fused, the previous defaults"], ranks["fused"]),
                   "defaults against dense alone": paired(ranks["dense"], ranks["fused"]),
                   **{f"adaptive signal {a} against the defaults": paired(
                       ranks[ONE_PASS], ranks[f"fused, adaptive signal {a}"])
                      for a in SIGNALS},
                   "coverage basis terms against the defaults": paired(ranks[ONE_PASS],
                                                                       ranks[TERMS]),
                   "coverage basis terms against dense alone": paired(ranks["dense"],
                                                                      ranks[TERMS]),
                   **{f"dense feedback {d} x {w} against the defaults": paired(
                       ranks[ONE_PASS], ranks[f"fused, dense feedback {d} x {w}"])
                      for d, w in FEEDBACK}},
        "distractors": count,
        "seed": seed,
        "ingest_per_s": (count + len(LEARNINGS)) / seconds,
        "sides": {side: _figures(ranks) for side, ranks in sides.items()},
        "machine": machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--distractors", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = run(args.distractors, args.seed, Path(tmp))
    print(f"{result['learnings']} paraphrased learnings among {result['distractors']} "
          "distractors")
    print(table(["side", "hit@1", "hit@10", "MRR"],
                [[s, f["hit@1"], f["hit@10"], f["mrr"]] for s, f in result["sides"].items()]))
    for name, test in result["paired"].items():
        print(f"{name}: {test['verdict']} (dMRR {test['mrr_delta']:+.3f} p {test['p_mrr']:.3f}; "
              f"hit@10 +{test['hit10_gained']} -{test['hit10_lost']} p {test['p_hit10']:.3f})")
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}))
    write_json(args.json, result)


if __name__ == "__main__":
    main()
