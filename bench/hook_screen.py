"""Screen gate signals on observed candidates, before any is built into the gate.

    python bench/hook_screen.py OBS.pkl [--json out.json]

Reads the observations bench/hook_quality.py wrote (``--observations``, best with a wide
``--dense-observed`` list) and says, per source (the corpus's tuning half, its held-out
half, LOCOMO dev):

- where the needed memory of a related prompt sits among the candidates: in recall's own
  hits (and by which side), among the dense rows added (by dense rank), or in neither;
- for a few per-prompt relative signals (how far a candidate's cosine stands above the
  prompt's k-th densest row, or in standard deviations over the prompt's own dense list)
  and for today's gate value, the AUC of the needed memory's best value against an
  unrelated prompt's best value, and the useful share at a 5% false share with the
  threshold read on the same data (a screen: optimistic, not a held-out figure; the
  refit in hook_quality.py cross-validates what passes it).
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "hooks"))

import gate_corpus  # noqa: E402

from _common import table, write_json  # noqa: E402
from aide_memoire.hooks.gate import Signals  # noqa: E402
from aide_memoire.hooks.prompt import DENSE_CANDIDATES, RECALL_LIMIT  # noqa: E402

Prompt = dict[str, Any]
# A candidate's value from its signals and its prompt's dense profile.
Value = Callable[[Signals, dict[str, Any]], float]


def in_list(s: Signals, dense_k: int) -> bool:
    """Whether the gate would read this candidate with ``dense_k`` dense rows added:
    one of recall's hits, or a dense row within the first ``dense_k``."""
    return s.rank <= RECALL_LIMIT or (s.dense_rank is not None and s.dense_rank <= dense_k)


def narrowed(prompts: list[Prompt], dense_k: int) -> list[Prompt]:
    """The observations as a list of ``dense_k`` dense rows would have read them (a
    candidate's margin is over the best other cosine, always among the densest rows, so
    it does not change)."""
    out = []
    for p in prompts:
        kept = [i for i, s in enumerate(p["signals"]) if in_list(s, dense_k)]
        out.append({**p, "signals": [p["signals"][i] for i in kept],
                    **({"sides": [p["sides"][i] for i in kept]} if "sides" in p else {})})
    return out


def sources(prompts: list[Prompt]) -> dict[str, list[Prompt]]:
    out: dict[str, list[Prompt]] = {}
    for p in prompts:
        key = p["source"] if p["source"] == "locomo" else f"corpus-{p['half']}"
        out.setdefault(key, []).append(p)
    return out


def placement(prompts: list[Prompt]) -> dict[str, Any]:
    """Where each related prompt's needed memory is: recall's hits (keyword side, dense
    side, both), a dense row added at rank <= 10 / 20 / 50 / observed, or neither."""
    counts: dict[str, int] = {}
    missing_cosine = 0
    related = [p for p in prompts if p["related"]]
    for p in related:
        where = "not a candidate"
        best = None
        for s, sides in zip(p["signals"], p["sides"], strict=True):
            if s.id not in p["needed"]:
                continue
            if s.rank <= RECALL_LIMIT:
                place = "recall: " + "+".join(sides)
                missing_cosine += "dense" not in sides and s.dense_rank is not None
            else:
                rank = s.dense_rank or 10**9
                place = next(f"dense rank <= {k}" for k in (10, 20, 50, 100, 10**9)
                             if rank <= k).replace(str(10**9), "observed")
            key = (0 if place.startswith("recall") else 1, s.dense_rank or 10**9)
            if best is None or key < best[0]:
                best = (key, place)
        if best is not None:
            where = best[1]
        counts[where] = counts.get(where, 0) + 1
    n = max(len(related), 1)
    return {"related": len(related), **{k: round(v / n, 3) for k, v in sorted(counts.items())},
            "recall hits with a dense rank but no dense score": missing_cosine}


def kth(profile: dict[str, Any], k: int) -> float:
    best = profile["best"]
    return float(best[min(k, len(best)) - 1])


def local_z(s: Signals, profile: dict[str, Any], k: int) -> float:
    best = np.asarray(profile["best"][:k])
    spread = float(best.std())
    return 0.0 if spread <= 0 else (float(s.dense or 0.0) - float(best.mean())) / spread


def over_kth(s: Signals, profile: dict[str, Any], k: int) -> float:
    return float(s.dense or 0.0) - kth(profile, k)


def today(s: Signals, profile: dict[str, Any]) -> float:
    """The gate's value with today's constants (cosine + 0.2 overlap + 1.0 margin)."""
    return float(s.dense or 0.0) + 0.2 * s.overlap + 1.0 * max(s.margin, 0.0)


def with_peak(s: Signals, profile: dict[str, Any], k: int, w: float) -> float:
    return today(s, profile) + w * max(over_kth(s, profile, k), 0.0)


def with_spread(s: Signals, profile: dict[str, Any], w: float) -> float:
    return today(s, profile) + w * float(profile["std"])


def cosine(s: Signals, profile: dict[str, Any]) -> float:
    return float(s.dense or 0.0)


def namespace_z(s: Signals, profile: dict[str, Any]) -> float:
    return float(s.z or 0.0)


def measures() -> dict[str, Value]:
    out: dict[str, Value] = {"today's value": today, "cosine": cosine,
                             "namespace z": namespace_z}
    for k in (5, 10, 20, 50):
        out[f"cosine - {k}th"] = partial(over_kth, k=k)
    for k in (20, 50, 200):
        out[f"z over best {k}"] = partial(local_z, k=k)
    for k in (10, 50):
        for w in (0.5, 1.0, 2.0):
            out[f"today + {w} x (cos - {k}th)"] = partial(with_peak, k=k, w=w)
    for w in (1.0, 2.0, 4.0, 8.0):
        out[f"today + {w} x spread"] = partial(with_spread, w=w)
    return out


def prompt_values(prompts: list[Prompt], value: Value) -> tuple[np.ndarray, np.ndarray]:
    """Related: the needed memory's best value (-inf if not a candidate); unrelated: the
    best value of any candidate."""
    rel, unrel = [], []
    for p in prompts:
        if p["profile"] is None or not p["signals"]:
            continue
        if p["related"]:
            found = [value(s, p["profile"]) for s in p["signals"] if s.id in p["needed"]]
            rel.append(max(found, default=-np.inf))
        else:
            unrel.append(max(value(s, p["profile"]) for s in p["signals"]))
    return np.array(rel), np.array(unrel)


def auc(rel: np.ndarray, unrel: np.ndarray) -> float:
    """P(a related prompt's needed value > an unrelated prompt's best), ties half."""
    if not len(rel) or not len(unrel):
        return float("nan")
    greater = (rel[:, None] > unrel[None, :]).mean()
    ties = (rel[:, None] == unrel[None, :]).mean()
    return float(greater + 0.5 * ties)


def useful_at(rel: np.ndarray, unrel: np.ndarray, false_share: float = 0.05) -> float:
    """The useful share at the lowest threshold that keeps the false share within it
    (read on the same data)."""
    ordered = np.sort(unrel)[::-1]
    allowed = int(false_share * len(ordered) + 1e-9)
    bar = ordered[allowed] if allowed < len(ordered) else -np.inf
    return float((rel > bar).mean()) if len(rel) else float("nan")


def screen(prompts: list[Prompt]) -> dict[str, Any]:
    parts = sources(prompts)
    out: dict[str, Any] = {"placement": {}, "signals": {}}
    for name, part in sorted(parts.items()):
        out["placement"][name] = placement(part)
    for label, value in measures().items():
        row = {}
        for name, part in sorted(parts.items()):
            rel, unrel = prompt_values(part, value)
            row[name] = {"auc": round(auc(rel, unrel), 3),
                         "useful@5%": round(useful_at(rel, unrel), 3)}
        out["signals"][label] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("observations", type=Path)
    parser.add_argument("--dense-candidates", type=int, nargs="*",
                        default=[DENSE_CANDIDATES, 20, 50])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    kept = pickle.loads(args.observations.read_bytes())
    prompts: list[Prompt] = kept["prompts"]
    for p in prompts:
        if p["source"] == "corpus":
            p["half"] = gate_corpus.split(p["group"])
    results = {}
    for k in args.dense_candidates:
        found = screen(narrowed(prompts, k))
        results[k] = found
        print(f"\n== {k} dense rows added to recall's {RECALL_LIMIT} ==")
        for name, where in found["placement"].items():
            print(f"needed memory, {name}: {where}")
        names = sorted(next(iter(found["signals"].values())))
        rows = [[label, *(f"{row[n]['auc']} / {row[n]['useful@5%']}" for n in names)]
                for label, row in found["signals"].items()]
        print(table(["signal (AUC / useful at 5% false, same data)", *names], rows))
    write_json(args.json, {str(k): v for k, v in results.items()})


if __name__ == "__main__":
    main()
