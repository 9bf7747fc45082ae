"""Cost of rule extraction on write: facts and entities of every LOCOMO turn, no store.

    python bench/facts_extract.py PATH/locomo-dev.json [--json bench/results/facts.json]

Prints ms per turn (median of 5 passes over every turn), facts and entities found. The
ingest speed with extraction on and off comes from ``bench/locomo.py --extract on|off``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, table, write_json  # noqa: E402
from aide_memoire.engine.facts.extract import extract  # noqa: E402
from locomo import sessions, turn_text  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", type=Path, help="a LOCOMO-format JSON file")
    parser.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = parser.parse_args()
    samples = json.loads(args.path.read_text(encoding="utf-8"))
    turns = [
        (t["speaker"], turn_text(t))
        for sample in samples
        for _, _, session in sessions(sample["conversation"])
        for t in session
    ]
    passes: list[float] = []
    facts = entities = 0
    for _ in range(5):
        facts = entities = 0
        started = time.perf_counter()
        for speaker, text in turns:
            found = extract(text, speaker=speaker)
            facts += len(found.facts)
            entities += len(found.entities)
        passes.append((time.perf_counter() - started) * 1000 / len(turns))
    result = {
        "turns": len(turns), "ms_per_turn": statistics.median(passes),
        "facts": facts, "entities": entities, "machine": machine(),
    }
    print(table(["turns", "ms/turn", "facts", "entities"],
                [[len(turns), result["ms_per_turn"], facts, entities]]))
    print(json.dumps(result))
    write_json(args.json, result)


if __name__ == "__main__":
    main()
