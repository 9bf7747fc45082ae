"""Check: every LOCOMO dev conversation stores with defaults, no turn refused.

Each of the conversations in the file (five in the dev split) is stored session by
session with ``Memory.store_conversation`` and its defaults (secrets redacted span by
span, suspected injection held), in a fresh keyword-only store. Exits 1 if any call
fails or any turn is missing; reports turns stored, redacted spans and held turns.
LOCOMO may not be committed: the path is given on the command line.

    .venv/bin/python bench/check_locomo.py /work/shared/data/locomo/locomo-dev.json
        [--json bench/results/check_locomo.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table, write_json  # noqa: E402
from aide_memoire import AideMemoireError, Memory, Settings  # noqa: E402


def check(path: Path) -> dict[str, Any]:
    samples = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, Any] = {"conversations": [], "failures": []}
    with tempfile.TemporaryDirectory() as home, Memory(
        settings=Settings(home=Path(home), embedding_model="none")
    ) as memory:
        for sample in samples:
            conversation = sample["conversation"]
            name = str(sample.get("sample_id", len(out["conversations"])))
            namespace = f"locomo:{name}".replace("_", "-")
            given = stored = redacted = 0
            for key, turns in conversation.items():
                if not key.startswith("session_") or not isinstance(turns, list):
                    continue
                batch = [{"speaker": t["speaker"], "content": t["text"]}
                         for t in turns if str(t.get("text", "")).strip()]
                if not batch:
                    continue
                given += len(batch)
                try:
                    result = memory.store_conversation_report(batch, namespace=namespace,
                                                              session_id=key)
                except AideMemoireError as exc:
                    out["failures"].append(f"{name} {key}: {type(exc).__name__}: {exc}")
                    continue
                stored += len(result.ids)
                redacted += len(result.redactions)
            held = len(memory.review_queue(namespace))
            out["conversations"].append({"conversation": name, "turns": given,
                                         "stored": stored, "redacted_spans": redacted,
                                         "held": held})
    out["ok"] = not out["failures"] and all(
        c["turns"] == c["stored"] for c in out["conversations"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path, help="LOCOMO JSON (e.g. the dev split).")
    parser.add_argument("--json", type=Path, default=None, help="Also write results here.")
    args = parser.parse_args()
    result = check(args.path)
    print(table(["conversation", "turns", "stored", "redacted spans", "held"],
                [[c["conversation"], c["turns"], c["stored"], c["redacted_spans"], c["held"]]
                 for c in result["conversations"]]))
    for failure in result["failures"]:
        print(failure, file=sys.stderr)
    write_json(args.json, {"machine": machine(), **result})
    print(json.dumps({"ok": result["ok"], "conversations": result["conversations"]}))
    sys.exit(0 if result["ok"] else 1)


if __name__ == "__main__":
    main()
