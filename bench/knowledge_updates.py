"""Totals of every knowledge-update set: "now" top-1, ``as_of`` top-1, controls linked.

    python bench/knowledge_updates.py [--mode hybrid|bm25] [--json OUT]

Runs each set of tests/facts (the general suite split into its tuning and test halves,
fresh, heldout3, heldout4, tuning2, tuning3) in its own namespace of one store, as
tests/facts/test_general_updates.py does, and prints totals only: a held-out set is read
this way, never item by item.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from tests.facts import test_general_updates as suite  # noqa: E402

from _common import table, write_json  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402

SETS = {
    "general": suite.GENERAL, "fresh": suite.FRESH, "heldout3": suite.HELDOUT3,
    "heldout4": suite.HELDOUT4, "tuning2": suite.TUNING2, "tuning3": suite.TUNING3,
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mode", choices=["hybrid", "bm25"], default="hybrid")
    parser.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = parser.parse_args()
    # A SQLite store as the suite's (its _memory takes pytest's request since the suite
    # runs on both backends); bm25 is keyword-only, as the suite's "keyword" mode.
    extra: dict[str, object] = {} if args.mode == "hybrid" else {"embedding_model": "none"}
    rows: list[list[object]] = []
    settings = Settings(home=Path(tempfile.mkdtemp()), **extra)  # type: ignore[arg-type]
    with Memory(settings=settings) as memory:
        for name, items in SETS.items():
            got = suite._run(memory, items, f"ku-{name}")
            parts = {f"{name}-{h}": (got[f"{h}:change"], got[f"{h}:control"])
                     for h in ("tune", "test")} if name == "general" else {
                name: suite._totals(got)}
            for label, (changes, controls) in parts.items():
                rows.append([label, f"{changes.now}/{changes.total}",
                             f"{changes.as_of}/{changes.total}",
                             f"{controls.linked}/{controls.total}",
                             f"{controls.as_of}/{controls.total}"])
    headers = ["set", "now", "as_of", "controls linked", "controls as_of"]
    print(table(headers, rows))
    write_json(args.json, {"mode": args.mode, "rows": [dict(zip(headers, r, strict=True))
                                                       for r in rows]})


if __name__ == "__main__":
    main()
