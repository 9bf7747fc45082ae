"""Quality and speed of the write screen: the labelled corpus (tests/trust/corpus.py) and
the adversarial corpora generated from classes (tests/trust/corpora/, tune and holdout
halves: stored/refused for secrets and look-alikes, held/active for injections and
imperative notes, per class), and the screen's cost per KB of text (p50/p95).

Secrets: positive = labelled ``secret``; predicted = the write is refused.
Injection: positive = labelled ``injection``; predicted = quarantined in enforce mode
(secret samples are left out: they never reach that stage).
PII: per kind over the ``pii`` and ``no-pii`` samples; predicted = that kind recorded.
Speed: microseconds to screen one text (secrets + PII + injection), short and 10 kB.
Benign outside text (bench/_benign.py, read where it lies, never copied): the share of
paragraphs each screen flags (secrets: any finding; injection: held, i.e. a high
finding for a writer other than the person), per source and per rule, with up to 5
examples per rule. Class-written corpora of #26 (tests/trust/classes/) by half.

    .venv/bin/python bench/screen.py [--json bench/results/screen.json]
        [--locomo /work/shared/data/locomo/locomo-dev.json] [--no-man] [--benign-only]
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
from tests.trust import classes  # noqa: E402
from tests.trust.corpora import NAMES, figures, load  # noqa: E402
from tests.trust.corpus import Sample, corpus  # noqa: E402

import _benign as benign  # noqa: E402
from _common import machine, percentile, table, write_json  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402
from aide_memoire.engine.trust import scan_pii, scan_secrets, screen_text  # noqa: E402
from aide_memoire.engine.trust.injection import scan_injection  # noqa: E402


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


def benign_figures(sources: dict[str, list[str]]) -> dict[str, Any]:
    """Share of benign paragraphs flagged, per screen, source and rule."""
    out: dict[str, Any] = {"sources": {}, "rules": {"secrets": {}, "injection": {}},
                           "examples": {"secrets": {}, "injection": {}}}
    total = {"paragraphs": 0, "secrets": 0, "injection": 0}
    for name, paragraphs in sources.items():
        flagged = {"secrets": 0, "injection": 0}
        for text in paragraphs:
            found = {"secrets": scan_secrets(text),
                     "injection": [f for f in scan_injection(text) if f.confidence == "high"]}
            for screen, findings in found.items():
                if not findings:
                    continue
                flagged[screen] += 1
                for rule in sorted({f.rule for f in findings}):
                    out["rules"][screen][rule] = out["rules"][screen].get(rule, 0) + 1
                    examples = out["examples"][screen].setdefault(rule, [])
                    if len(examples) < 5:
                        first = next(f for f in findings if f.rule == rule)
                        examples.append(f"{name}: ..."
                                        + " ".join(text[max(0, first.start - 50):first.end + 20]
                                                   .split()) + "...")
        n = len(paragraphs)
        out["sources"][name] = {"paragraphs": n, **{
            f"{screen}_flagged": count for screen, count in flagged.items()}, **{
            f"{screen}_share": count / n if n else 0.0 for screen, count in flagged.items()}}
        total["paragraphs"] += n
        total["secrets"] += flagged["secrets"]
        total["injection"] += flagged["injection"]
    n = max(total["paragraphs"], 1)
    out["total"] = {**total, "secrets_share": total["secrets"] / n,
                    "injection_share": total["injection"] / n}
    for screen in ("secrets", "injection"):
        out["rules"][screen] = {rule: {"paragraphs": c, "share": c / n}
                                for rule, c in sorted(out["rules"][screen].items())}
    return out


def classes_figures() -> dict[str, Any]:
    import tempfile

    with tempfile.TemporaryDirectory() as home, Memory(
        settings=Settings(home=Path(home), embedding_model="none")
    ) as memory:
        return classes.figures(memory)


def _print_benign(result: dict[str, Any]) -> None:
    print(table(
        ["source", "paragraphs", "secrets", "share", "injection (held)", "share"],
        [[name, r["paragraphs"], r["secrets_flagged"], f"{r['secrets_share']:.4%}",
          r["injection_flagged"], f"{r['injection_share']:.4%}"]
         for name, r in [*result["sources"].items(), ("total", {
             "paragraphs": result["total"]["paragraphs"],
             "secrets_flagged": result["total"]["secrets"],
             "secrets_share": result["total"]["secrets_share"],
             "injection_flagged": result["total"]["injection"],
             "injection_share": result["total"]["injection_share"]})]],
    ))
    print()
    print(table(["screen", "rule", "paragraphs", "share"],
                [[screen, rule, r["paragraphs"], f"{r['share']:.4%}"]
                 for screen, rules in result["rules"].items() for rule, r in rules.items()]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, default=None, help="Also write results here.")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--locomo", type=Path, default=None,
                        help="LOCOMO dev JSON, read as benign conversation turns.")
    parser.add_argument("--site-packages", type=Path, default=None,
                        help="Where the installed packages' METADATA is (default: the venv's).")
    parser.add_argument("--no-man", action="store_true", help="Leave out the manual pages.")
    parser.add_argument("--benign-only", action="store_true",
                        help="Only the benign corpus and the class-written corpora.")
    args = parser.parse_args()
    import sysconfig

    site = args.site_packages or Path(sysconfig.get_paths()["purelib"])
    sources = benign.paragraphs(
        site_packages=site, locomo_path=args.locomo, docs_root=ROOT / "docs",
        man_root=Path("/nonexistent") if args.no_man else Path("/usr/share/man"))
    outside = benign_figures(sources)
    by_class = classes_figures()
    _print_benign(outside)
    print()
    print(table(["class corpus", "half", "n", "expected", "not as expected"],
                [[name, part, h["n"], d["expected"], h["not_expected"]]
                 for name, d in by_class.items() for part, h in d["halves"].items()]))
    if args.benign_only:
        write_json(args.json, {"machine": machine(), "benign": outside, "classes": by_class})
        return
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
               "errors": errors, "adversarial": adversarial, "cost_per_kb": cost,
               "benign": outside, "classes": by_class}
    write_json(args.json, payload)
    import json

    print(json.dumps({"quality": results, "speed": timing, "cost_per_kb": cost,
                      "adversarial": {n: d["halves"] for n, d in adversarial.items()}},
                     default=str))


if __name__ == "__main__":
    main()
