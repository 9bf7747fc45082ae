"""The prompt hook's relevance floor, chosen by leave-one-conversation-out cross-validation.

    python bench/hook_floor.py /work/shared/data/locomo/locomo-dev.json [--json out.json]

Each LOCOMO conversation is one project namespace (keyword-only, as the prompt hook runs
without the daemon). Related prompts: its own questions (with evidence); unrelated
prompts: the questions of another conversation, asked in this one's namespace. For a
floor f, a related prompt is *useful* when an evidence turn clears f and is injected; an
unrelated prompt is a *false injection* when anything clears f. The floor maximising
useful rate - false rate on four conversations is scored on the fifth; the printed
figures are those held-out scores. The default ``hook_recall_floor`` is the floor chosen
on all five (docs/hooks.md).
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
from aide_memoire import Memory, Settings  # noqa: E402
from aide_memoire.hooks.prompt import (  # noqa: E402
    RECALL_LIMIT,
    prompt_stems,
    relevance,
)
from locomo import CATEGORIES, ingest, parse_evidence  # noqa: E402

FLOORS = [round(0.05 * i, 2) for i in range(1, 21)]


def observe(path: Path, home: Path) -> dict[str, list[dict[str, Any]]]:
    """Per conversation: each prompt's hits as (relevance, is evidence) pairs."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, list[dict[str, Any]]] = {}
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        spaces = []
        for sample in samples:
            namespace, _, by_id = ingest(memory, sample)
            spaces.append((sample, namespace, by_id))
        for number, (sample, namespace, by_id) in enumerate(spaces):
            other = spaces[(number + 1) % len(spaces)][0]
            prompts: list[dict[str, Any]] = []
            for qa, related in [(q, True) for q in sample["qa"]] + [
                (q, False) for q in other["qa"]
            ]:
                if qa.get("category") not in CATEGORIES:
                    continue
                evidence = set(parse_evidence(qa.get("evidence", [])))
                if related and not evidence:
                    continue
                terms = prompt_stems(qa["question"])
                hits = memory.recall(qa["question"], namespace=namespace, limit=RECALL_LIMIT)
                prompts.append({
                    "related": related,
                    "hits": [(relevance(terms, h.content), related and by_id.get(h.id) in evidence)
                             for h in hits],
                })
            out[str(sample["sample_id"])] = prompts
    return out


def rates(prompts: list[dict[str, Any]], floor: float) -> tuple[float, float]:
    related = [p for p in prompts if p["related"]]
    unrelated = [p for p in prompts if not p["related"]]
    useful = sum(any(r >= floor and ev for r, ev in p["hits"]) for p in related)
    false = sum(any(r >= floor for r, _ in p["hits"]) for p in unrelated)
    return useful / max(len(related), 1), false / max(len(unrelated), 1)


def choose(prompts: list[dict[str, Any]]) -> float:
    def gain(floor: float) -> float:
        useful, false = rates(prompts, floor)
        return useful - false
    return max(FLOORS, key=lambda f: (gain(f), f))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        observed = observe(args.data, Path(tmp))
    rows: list[dict[str, Any]] = []
    for held in observed:
        train = [p for name, ps in observed.items() if name != held for p in ps]
        floor = choose(train)
        useful, false = rates(observed[held], floor)
        rows.append({"held_out": held, "floor": floor, "useful": round(useful, 3),
                     "false_injection": round(false, 3)})
    everything = [p for ps in observed.values() for p in ps]
    chosen = choose(everything)
    mean_useful = sum(r["useful"] for r in rows) / len(rows)
    mean_false = sum(r["false_injection"] for r in rows) / len(rows)
    print(table(["held out", "floor", "useful", "false injection"],
                [[r["held_out"], r["floor"], r["useful"], r["false_injection"]] for r in rows]))
    print(f"held-out mean: useful {mean_useful:.3f}, false injection {mean_false:.3f}; "
          f"floor chosen on all: {chosen}")
    write_json(args.json, {"machine": machine(), "folds": rows, "chosen_floor": chosen,
                           "held_out_useful": mean_useful, "held_out_false": mean_false})


if __name__ == "__main__":
    main()
