"""LOCOMO evidence retrieval, LLM-free: is a gold evidence turn among the top k recalled?

    python bench/locomo.py PATH/locomo-dev.json [--json bench/results/locomo.json]
    python bench/locomo.py PATH/locomo-dev.json --backend postgres --extract off

One namespace per conversation; turns stored with ``store_conversation`` (session dates
from the file, photo captions appended to their turn's text); every question of
categories 1-4 with evidence is recalled with limit 50. Prints, overall and per
category, turn-level hit@1/5/10/50, recall@10/50 and all@10 (every evidence turn found)
and MRR; session-level hit, recall and all at 1/3/5 sessions (the sessions in the order
of their first recalled turn); the tokens a top-10 costs (characters / 4); ingest
turns/s and recall p50/p95.

``--backend postgres`` runs the same against a PostgreSQL + pgvector server the bench
starts in a temporary directory (pgserver), or against ``--database-url URL``; facts on
PostgreSQL need ``--extract off`` until the backend stores them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pydantic import SecretStr  # noqa: E402

from _common import machine, percentile, progress, table, write_json  # noqa: E402
from _postgres import temporary_server  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402

KS = (1, 5, 10, 50)
SESSION_KS = (1, 3, 5)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
METRICS = ([f"hit@{k}" for k in KS] + ["recall@10", "all@10", "recall@50", "all@50", "mrr"]
           + [f"s-{m}@{k}" for k in SESSION_KS for m in ("hit", "recall", "all")]
           + ["tokens@10"])


def parse_evidence(items: list[Any]) -> list[str]:
    """Lenient, as the dataset's README says: 'D:11:26' -> 'D11:26', 'D30:05' -> 'D30:5'."""
    out = []
    for item in items:
        for part in re.split(r"[;\s]+", str(item)):
            match = re.match(r"^D:?(\d+):0*(\d+)$", part.strip())
            if match:
                out.append(f"D{int(match.group(1))}:{int(match.group(2))}")
    return out


def parse_date(text: str) -> datetime | None:
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        return None


def sessions(conversation: dict[str, Any]) -> list[tuple[int, str, list[dict[str, Any]]]]:
    numbers = sorted(int(k.split("_")[1]) for k in conversation if re.fullmatch(r"session_\d+", k))
    return [
        (n, conversation.get(f"session_{n}_date_time", ""), conversation[f"session_{n}"])
        for n in numbers
    ]


def turn_text(turn: dict[str, Any]) -> str:
    caption = turn.get("blip_caption")
    return f"{turn['text']} [shares a photo of {caption}]" if caption else turn["text"]


def ingest(memory: Memory, sample: dict[str, Any],
           namespace: str | None = None) -> tuple[str, int, dict[str, str]]:
    namespace = namespace or f"locomo:{sample['sample_id']}"
    count = 0
    by_id: dict[str, str] = {}
    for number, date, turns in sessions(sample["conversation"]):
        batch = [
            {
                "speaker": t["speaker"],
                "content": turn_text(t),
                "metadata": {"dia_id": t["dia_id"]},
            }
            for t in turns
        ]
        if not batch:
            continue
        ids = memory.store_conversation(
            batch, namespace=namespace, session_id=f"session_{number}", observed_at=parse_date(date)
        )
        for turn, memory_id in zip(turns, ids, strict=True):
            by_id[memory_id] = turn["dia_id"]
        count += len(batch)
    return namespace, count, by_id


def session_of(dia_id: str) -> str:
    """'D12:3' -> 'D12': the session a turn belongs to."""
    return dia_id.split(":", 1)[0]


def score(ranked: list[str], evidence: set[str]) -> dict[str, float]:
    """Turn level (hit@k: any evidence turn in the first k; recall@k: the share of them;
    all@k: every one), then session level over the sessions in order of their first
    turn recalled (s-hit@k, s-recall@k, s-all@k), as the field reports both units."""
    out = {f"hit@{k}": float(any(x in evidence for x in ranked[:k])) for k in KS}
    for k in (10, 50):
        found = len(set(ranked[:k]) & evidence)
        out[f"recall@{k}"] = found / len(evidence)
        out[f"all@{k}"] = float(found == len(evidence))
    out["mrr"] = next((1.0 / (i + 1) for i, x in enumerate(ranked) if x in evidence), 0.0)
    sessions = list(dict.fromkeys(session_of(x) for x in ranked if x))
    wanted = {session_of(x) for x in evidence}
    for k in SESSION_KS:
        found = len(set(sessions[:k]) & wanted)
        out[f"s-hit@{k}"] = float(found > 0)
        out[f"s-recall@{k}"] = found / len(wanted)
        out[f"s-all@{k}"] = float(found == len(wanted))
    return out


def top10_tokens(texts: list[str]) -> int:
    """What a top-10 costs an agent's context: about one token per four characters (the
    usual rule of thumb for English; no tokenizer of a particular model is assumed)."""
    return sum(len(t) for t in texts[:10]) // 4


def run(
    path: Path, home: Path, *, mode: str, lifecycle: bool = True, extract: bool = True,
    bridges: bool = False, database_url: str | None = None,
) -> dict[str, Any]:
    samples = json.loads(path.read_text(encoding="utf-8"))
    settings = Settings(
        home=home, embedding_model="none" if mode == "bm25" else Settings().embedding_model,
        lifecycle_scoring=lifecycle,
        extract_facts=extract,
        entity_bridges=bridges,
        database_url=SecretStr(database_url) if database_url else None,
    )
    rows: list[dict[str, Any]] = []
    latencies: list[float] = []
    turns_total = 0
    ingest_seconds = 0.0
    with Memory(settings=settings) as memory:
        if mode == "dense":
            recaller = memory.internals.recaller
            recaller.tuning = replace(recaller.tuning, keyword_weight=0.0)
        memory.internals.embedder.wait()
        for sample in progress(samples, desc="conversations"):
            started = time.perf_counter()
            namespace, count, by_id = ingest(memory, sample)
            ingest_seconds += time.perf_counter() - started
            turns_total += count
            known = set(by_id.values())
            for qa in sample["qa"]:
                category = qa.get("category")
                if category not in CATEGORIES:
                    continue
                evidence = {e for e in parse_evidence(qa.get("evidence", [])) if e in known}
                if not evidence:
                    continue
                started = time.perf_counter()
                hits = memory.recall(qa["question"], namespace=namespace, limit=50)
                latencies.append((time.perf_counter() - started) * 1000)
                ranked = [by_id.get(h.id, "") for h in hits]
                rows.append({"category": category, **score(ranked, evidence),
                             "tokens@10": top10_tokens([h.content for h in hits])})
    result = summarise(rows, latencies, turns_total, ingest_seconds, mode)
    result["lifecycle"] = "on" if lifecycle else "off"
    result["extract"] = "on" if extract else "off"
    result["bridges"] = "on" if bridges else "off"
    result["backend"] = "sqlite" if database_url is None else "postgres"
    return result


def summarise(
    rows: list[dict[str, Any]], latencies: list[float], turns: int, seconds: float, mode: str
) -> dict[str, Any]:
    metrics = METRICS

    def mean(subset: list[dict[str, Any]]) -> dict[str, float]:
        return {m: sum(r[m] for r in subset) / len(subset) for m in metrics} | {"n": len(subset)}

    return {
        "mode": mode,
        "overall": mean(rows),
        "by_category": {
            CATEGORIES[c]: mean([r for r in rows if r["category"] == c])
            for c in CATEGORIES
            if any(r["category"] == c for r in rows)
        },
        "ingest_turns": turns,
        "ingest_turns_per_s": turns / seconds if seconds else 0.0,
        "recall_ms_p50": percentile(latencies, 50),
        "recall_ms_p95": percentile(latencies, 95),
        "machine": machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", type=Path, help="a LOCOMO-format JSON file")
    parser.add_argument("--mode", choices=["hybrid", "bm25", "dense"], default="hybrid")
    parser.add_argument(
        "--home", type=Path, default=None, help="store folder (default: a temp dir)"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the result here")
    parser.add_argument(
        "--extract", choices=["on", "off"], default="on",
        help="fact and entity extraction on write (rules; the extract_facts setting)",
    )
    parser.add_argument(
        "--bridges", choices=["on", "off"], default="off",
        help="entity bridges in recall (the entity_bridges setting; off by default)",
    )
    parser.add_argument(
        "--lifecycle", choices=["on", "off"], default="on",
        help="lifecycle scoring at its default weights (on) or pure relevance (off); the "
        "bench's own recalls leave access history, as a user's would",
    )
    parser.add_argument(
        "--backend", choices=["sqlite", "postgres"], default="sqlite",
        help="the store: a SQLite file in the home, or PostgreSQL (a server the bench starts "
        "in a temp dir unless --database-url is given)",
    )
    parser.add_argument(
        "--database-url", default=None,
        help="an existing PostgreSQL store (implies --backend postgres); its namespaces "
        "locomo:* should be empty",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, _store_url(args) as url:
        result = run(
            args.path, args.home or Path(tmp), mode=args.mode, lifecycle=args.lifecycle == "on",
            extract=args.extract == "on", bridges=args.bridges == "on", database_url=url,
        )
    parts = result["by_category"] | {"overall": result["overall"]}
    turn_level = [f"hit@{k}" for k in KS] + ["recall@10", "all@10", "recall@50", "mrr"]
    session_level = [f"s-{m}@{k}" for k in SESSION_KS for m in ("hit", "recall", "all")]
    print(
        f"LOCOMO evidence retrieval ({result['backend']}, {result['mode']}, "
        f"lifecycle {result['lifecycle']}, "
        f"extract {result['extract']}, bridges {result['bridges']})"
    )
    for title, metrics in (("turn level", turn_level),
                           ("session level", session_level + ["tokens@10"])):
        print(title)
        print(table(["split", "n", *metrics],
                    [[name, data["n"], *(data[m] for m in metrics)]
                     for name, data in parts.items()]))
    print(
        f"ingest {result['ingest_turns']} turns at {result['ingest_turns_per_s']:.1f} turns/s; "
        f"recall p50 {result['recall_ms_p50']:.1f} ms, p95 {result['recall_ms_p95']:.1f} ms"
    )
    print(json.dumps(result))
    write_json(args.json, result)


@contextlib.contextmanager
def _store_url(args: argparse.Namespace) -> Iterator[str | None]:
    """None for SQLite; else the given URL, or one of a server started for the run."""
    if args.database_url:
        yield args.database_url
    elif args.backend == "postgres":
        with temporary_server("locomo") as url:
            yield url
    else:
        yield None


if __name__ == "__main__":
    main()
