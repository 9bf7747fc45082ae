"""Quality and speed of the write screen: the labelled corpus (tests/trust/corpus.py) and
the adversarial corpora generated from classes (tests/trust/corpora/, tune and holdout
halves: stored/refused for secrets and look-alikes, held/active for injections and
imperative notes, per class), and the screen's cost per KB of text (p50/p95).

Secrets: positive = labelled ``secret``; predicted = the write is refused.
Injection: positive = labelled ``injection``; predicted = quarantined in enforce mode
(secret samples are left out: they never reach that stage).
PII: per kind over the ``pii`` and ``no-pii`` samples; predicted = that kind recorded.
Speed: microseconds to screen one text (secrets + PII + injection), short and 10 kB.

    .venv/bin/python bench/screen.py [--json bench/results/screen.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tests.trust.corpora import NAMES, figures, load  # noqa: E402
from tests.trust.corpus import Sample, corpus  # noqa: E402

from _common import machine, percentile, table, write_json  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402
from aide_memoire.engine.trust import scan_pii, scan_secrets, screen_text  # noqa: E402


def _scores(tp: int, fp: int, fn: int, tn: int) -> dict[str, Any]:
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": precision, "recall": recall}


def _confusion(samples: list[Sample], truth: Any, predict: Any) -> tuple[dict[str, Any], list[str]]:
    tp = fp = fn = tn = 0
    errors: list[str] = []
    for sample in samples:
        actual, guess = truth(sample), predict(sample)
        if actual and guess:
            tp += 1
        elif guess:
            fp += 1
            errors.append(f"false positive: {sample.text[:70]!r}")
        elif actual:
            fn += 1
            errors.append(f"missed ({sample.kind or sample.label}): {sample.text[:70]!r}")
        else:
            tn += 1
    return _scores(tp, fp, fn, tn), errors


def quality(samples: list[Sample]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    results: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    results["secret"], e = _confusion(
        samples, lambda s: s.label == "secret", lambda s: bool(scan_secrets(s.text))
    )
    errors += e
    reachable = [s for s in samples if s.label != "secret"]
    results["injection"], e = _confusion(
        reachable,
        lambda s: s.label == "injection",
        lambda s: screen_text(s.text, mode="enforce").quarantine,
    )
    errors += e
    personal = [s for s in samples if s.label in ("pii", "no-pii")]
    for kind in sorted({s.kind for s in personal if s.kind}):
        results[f"pii:{kind}"], e = _confusion(
            personal,
            lambda s, k=kind: s.kind == k,
            lambda s, k=kind: any(f.rule == k for f in scan_pii(s.text)),
        )
        errors += e
    return results, errors


def speed(samples: list[Sample], rounds: int) -> dict[str, Any]:
    def screen(text: str) -> None:
        scan_secrets(text)
        screen_text(text, mode="enforce")

    short = [s.text for s in samples]
    prose = [s.text for s in samples if s.label == "clean" and s.note != "near miss"]
    long_texts = {
        "mixed_10kB": (" ".join(short))[:10_000],  # worst case: every rule's trigger present
        "prose_10kB": (" ".join(prose * 10))[:10_000],
    }
    per_short: list[float] = []
    for _ in range(rounds):
        for text in short:
            start = time.perf_counter()
            screen(text)
            per_short.append((time.perf_counter() - start) * 1e6)
    out = {
        "short_p50_us": percentile(per_short, 50),
        "short_p95_us": percentile(per_short, 95),
        "short_mean_chars": sum(map(len, short)) / len(short),
    }
    for name, text in long_texts.items():
        per_long: list[float] = []
        for _ in range(rounds * 5):
            start = time.perf_counter()
            screen(text)
            per_long.append((time.perf_counter() - start) * 1e6)
        out[f"{name}_p50_us"] = percentile(per_long, 50)
        out[f"{name}_p95_us"] = percentile(per_long, 95)
    return out


def corpora_figures() -> dict[str, Any]:
    """Each adversarial corpus through a real (keyword-only) store, by half and class."""
    import tempfile

    with tempfile.TemporaryDirectory() as home, Memory(
        settings=Settings(home=Path(home), embedding_model="none")
    ) as memory:
        return figures(memory)


def cost_per_kb(rounds: int) -> dict[str, Any]:
    """Microseconds per KB of text for the whole screen (secrets, PII, injection, with
    normalisation), over every corpus row and over 10 kB documents built from them."""
    rows = [row["text"] for name in NAMES for row in load(name)]
    documents = [(" ".join(rows[i:] + rows[:i]))[:10_000] for i in range(0, len(rows), 61)]
    out: dict[str, Any] = {}
    for label, texts, repeat in (("rows", rows, rounds), ("10kB", documents, rounds * 3)):
        per_kb: list[float] = []
        for _ in range(repeat):
            for text in texts:
                start = time.perf_counter()
                scan_secrets(text)
                screen_text(text, mode="enforce")
                elapsed = (time.perf_counter() - start) * 1e6
                per_kb.append(elapsed / (len(text.encode("utf-8")) / 1024))
        out[f"{label}_us_per_kb_p50"] = percentile(per_kb, 50)
        out[f"{label}_us_per_kb_p95"] = percentile(per_kb, 95)
        out[f"{label}_n"] = len(texts)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, default=None, help="Also write results here.")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    samples = corpus()
    counts: dict[str, int] = {}
    for sample in samples:
        counts[sample.label] = counts.get(sample.label, 0) + 1
    results, errors = quality(samples)
    timing = speed(samples, args.rounds)
    adversarial = corpora_figures()
    cost = cost_per_kb(args.rounds)
    print(f"corpus: {len(samples)} samples {counts}")
    print(table(
        ["rule set", "precision", "recall", "tp", "fp", "fn", "tn"],
        [[name, r["precision"], r["recall"], r["tp"], r["fp"], r["fn"], r["tn"]]
         for name, r in results.items()],
    ))
    print()
    print(table(["speed", "microseconds"], [[k, v] for k, v in timing.items()]))
    print()
    print(table(
        ["corpus", "half", "n", "expected", "refused", "held", "active", "rate"],
        [[name, half, h["n"], data["expected"], h.get("refused", 0), h.get("held", 0),
          h.get("active", 0), h["rate"]]
         for name, data in adversarial.items() for half, h in data["halves"].items()],
    ))
    print()
    print(table(["cost", "value"], [[k, v] for k, v in cost.items()]))
    for error in errors:
        print(error)
    payload = {"machine": machine(), "corpus": counts, "quality": results, "speed": timing,
               "errors": errors, "adversarial": adversarial, "cost_per_kb": cost}
    write_json(args.json, payload)
    import json

    print(json.dumps({"quality": results, "speed": timing, "cost_per_kb": cost,
                      "adversarial": {n: d["halves"] for n, d in adversarial.items()}},
                     default=str))


if __name__ == "__main__":
    main()
