"""Ingest speed with near-duplicate detection on write on and off, and maintenance timing.

    python bench/lifecycle.py PATH/locomo-dev.json [--conversations 3] [--json OUT]

LOCOMO turns are stored as notes (``store_many``, one batch per session), the kind that
near-duplicate detection covers (conversation turns never are), into a fresh store per
policy; each policy is timed twice, in alternating order, and the faster run kept (the
machine is shared). Then a dry maintenance run over the same notes is timed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, table, write_json  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402
from locomo import sessions, turn_text  # noqa: E402


def batches(path: Path, conversations: int) -> list[list[dict[str, Any]]]:
    samples = json.loads(path.read_text(encoding="utf-8"))[:conversations]
    out = []
    for sample in samples:
        for _, _, turns in sessions(sample["conversation"]):
            if turns:
                out.append([{"content": f"{t['speaker']}: {turn_text(t)}"} for t in turns])
    return out


def ingest(home: Path, policy: str, work: list[list[dict[str, Any]]]) -> dict[str, Any]:
    settings = Settings(home=home, near_duplicate_policy=policy)  # type: ignore[arg-type]
    with Memory(settings=settings) as memory:
        memory.internals.embedder.wait()
        memory.store("warm up the encoder", namespace="warm")
        hook, spent = memory.internals.services.lifecycle.near_duplicates, [0.0]

        def timed(tx: Any, written: Any, vectors: Any) -> None:
            begun = time.perf_counter()
            hook(tx, written, vectors)
            spent[0] += time.perf_counter() - begun

        memory.internals.context.pipeline.replace_hook("near_duplicates", timed)
        count, started = 0, time.perf_counter()
        for batch in work:
            memory.store_many(batch, namespace="bench")
            count += len(batch)
        seconds = time.perf_counter() - started
        links = memory.internals.db.conn().execute(
            "SELECT count(*) FROM memory_links").fetchone()[0]
        archived = memory.internals.db.conn().execute(
            "SELECT count(*) FROM memories WHERE status = 'archived'").fetchone()[0]
        started = time.perf_counter()
        report = memory.maintain("bench")
        maintain_s = time.perf_counter() - started
    return {"policy": policy, "notes": count, "seconds": seconds, "notes_per_s": count / seconds,
            "hook_s": spent[0], "hook_share": spent[0] / seconds,
            "links": int(links), "archived": int(archived), "dry_maintain_s": maintain_s,
            "planned": {k: sum(a.kind == k for a in report.actions)
                        for k in {a.kind for a in report.actions}}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path)
    parser.add_argument("--conversations", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    work = batches(args.path, args.conversations)
    best: dict[str, dict[str, Any]] = {}
    for policy in ("off", "link", "merge", "off", "link", "merge"):
        with tempfile.TemporaryDirectory() as tmp:
            result = ingest(Path(tmp) / "home", policy, work)
        if policy not in best or result["seconds"] < best[policy]["seconds"]:
            best[policy] = result
    rows = [[r["policy"], r["notes"], r["notes_per_s"], r["hook_s"], r["links"], r["archived"],
             r["dry_maintain_s"], json.dumps(r["planned"])] for r in best.values()]
    print("Ingest of LOCOMO turns as notes, near-duplicate detection by policy")
    print(table(["policy", "notes", "notes/s", "hook s", "links", "archived", "dry maintain s",
                 "planned"], rows))
    result = {"runs": list(best.values()), "machine": machine()}
    print(json.dumps(result))
    write_json(args.json, result)


if __name__ == "__main__":
    main()
