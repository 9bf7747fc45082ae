"""What the prompt hook injects: the needed memory for related prompts, nothing otherwise.

    python bench/hook_quality.py /work/shared/data/locomo/locomo-dev.json [--json out.json]
        [--distractors 3000] [--locomo-distractors 1000] [--cli 24]

Material: the fixture corpus (tests/hooks/fixtures/gate/corpus.json: memories by class,
prompts worded as a person in a coding session asks, unrelated prompts of many kinds),
split by a fixed hash into a tuning half and a held-out half (tests/hooks/gate_corpus.py),
stored in one project namespace among ``--distractors`` generated memories and
``--locomo-distractors`` LOCOMO turns; and LOCOMO dev, one namespace per conversation,
related = a question against its own conversation (needed = an evidence turn), unrelated
= the next conversation's questions against it.

Tuning (on the tuning half and LOCOMO only): for each pair of weights on a small grid,
the threshold is the lowest whose false share stays within ``--false-target`` on each
source; the pair with the best mean useful share wins. The cosine's Platt scaling (the
calibrated value shown with each decision) is a logistic fit. Five folds (corpus by hash, LOCOMO by
conversation) give cross-validated figures; the constants fitted on all the tuning
material are printed next to the ones in hooks/gate.py (GateTuning), which are
what the held-out figures use: the held-out half is run through the hook's real entry
point, ``service.handle`` (as the daemon and the hook process call it), with a fresh
session per prompt, and ``--cli`` of its prompts also through the real
``aide-memoire hook user-prompt-submit`` process (keyword-only, no daemon) to show that
it prints what ``handle`` returns. Keyword-only figures (the lexical gate) come beside.

Shares: related prompts whose needed memory was injected; unrelated prompts that
received anything; tokens injected per prompt (about four characters each) p50 / p95
over the prompts that received something.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import pickle
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "hooks"))

import gate_corpus  # noqa: E402

from _common import machine, percentile, table, write_json  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402
from aide_memoire.engine.core.projects import project_for  # noqa: E402
from aide_memoire.hooks.briefing import CHARS_PER_TOKEN  # noqa: E402
from aide_memoire.hooks.gate import GateTuning, Signals, decide, score  # noqa: E402
from aide_memoire.hooks.prompt import (  # noqa: E402
    candidates,
    hit_signals,
    prompt_stems,
)
from aide_memoire.hooks.service import handle  # noqa: E402
from locomo import CATEGORIES, ingest, parse_evidence, sessions, turn_text  # noqa: E402

FOLDS = 5
EARLIER_SESSION = "earlier-session"

Prompt = dict[str, Any]  # source, group, fold, related, needed (ids), signals, text, ns


# -- material ------------------------------------------------------------------------------


def _fold(text: str) -> int:
    return hashlib.sha256(("fold:" + text).encode()).digest()[0] % FOLDS


def store_corpus(memory: Memory, namespace: str, corpus: gate_corpus.Corpus,
                 distractors: Sequence[str], locomo_turns: Sequence[str]) -> dict[str, str]:
    """The corpus's memories among the distractors; returns memory key -> stored id."""
    items = [{"content": t, "kind": "learning" if i % 3 else "note"}
             for i, t in enumerate(distractors)]
    items += [{"content": t, "kind": "note"} for t in locomo_turns]
    for start in range(0, len(items), 256):
        memory.store_many(items[start : start + 256], namespace=namespace)
    ids: dict[str, str] = {}
    turns = [m for m in corpus.memories if m.kind == "turn"]
    for m in corpus.memories:
        if m.kind != "turn":
            tags = ["decision"] if m.cls == "decision" else []
            ids[m.key] = memory.store(m.content, namespace=namespace, kind=m.kind, tags=tags)
    if turns:
        # Said by the person in an earlier session, an assistant's answer between them.
        batch: list[dict[str, Any]] = []
        for m in turns:
            batch += [{"speaker": "user", "content": m.content},
                      {"speaker": "assistant", "content": "Noted, I will keep that in mind."}]
        stored = memory.store_conversation(batch, namespace=namespace,
                                           session_id=EARLIER_SESSION)
        for number, m in enumerate(turns):
            ids[m.key] = stored[2 * number]
    return ids


def locomo_distractor_turns(samples: list[dict[str, Any]], count: int) -> list[str]:
    turns = [turn_text(t) for s in samples for _, _, ts in sessions(s["conversation"])
             for t in ts]
    turns.sort(key=lambda t: hashlib.sha256(t.encode()).hexdigest())
    return turns[:count]


def observe(memory: Memory, namespace: str, prompt: str) -> list[Signals]:
    """The gate's signals for ``prompt``: the candidates and signals prompt_context reads."""
    hits, profile = candidates(memory, namespace, prompt)
    return hit_signals(hits, prompt_stems(prompt), profile)


def corpus_prompts(memory: Memory, namespace: str, corpus: gate_corpus.Corpus,
                   ids: dict[str, str], *, with_signals: bool = True) -> list[Prompt]:
    out: list[Prompt] = []
    for m in corpus.memories:
        for text in m.prompts:
            out.append({"source": "corpus", "group": m.key, "cls": m.cls,
                        "half": gate_corpus.split(m.key), "fold": _fold(m.key),
                        "related": True, "needed": {ids[m.key]}, "text": text,
                        "ns": namespace})
    for u in corpus.unrelated:
        out.append({"source": "corpus", "group": u.prompt, "cls": u.cls,
                    "half": gate_corpus.split(u.prompt), "fold": _fold(u.prompt),
                    "related": False, "needed": set(), "text": u.prompt, "ns": namespace})
    if with_signals:
        for p in out:
            p["signals"] = observe(memory, namespace, p["text"])
    return out


def locomo_prompts(memory: Memory, samples: list[dict[str, Any]]) -> list[Prompt]:
    spaces = []
    for sample in samples:
        namespace, _, by_id = ingest(memory, sample)
        spaces.append((sample, namespace, by_id))
    out: list[Prompt] = []
    for number, (sample, namespace, by_id) in enumerate(spaces):
        other = spaces[(number + 1) % len(spaces)][0]
        asked = [(q, True) for q in sample["qa"]] + [(q, False) for q in other["qa"]]
        for qa, related in asked:
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = set(parse_evidence(qa.get("evidence", [])))
            if related and not evidence:
                continue
            needed = {i for i, dia in by_id.items() if dia in evidence} if related else set()
            out.append({"source": "locomo", "group": str(sample["sample_id"]),
                        "cls": "locomo", "half": "tune", "fold": number % FOLDS,
                        "related": related, "needed": needed, "text": qa["question"],
                        "ns": namespace,
                        "signals": observe(memory, namespace, qa["question"])})
    return out


# -- fitting -------------------------------------------------------------------------------


def logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float = 1e-2) -> np.ndarray:
    """Weighted L2 logistic regression by Newton's method; returns [bias, *coefs]."""
    xb = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(xb.shape[1])
    reg = np.eye(xb.shape[1]) * l2
    reg[0, 0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(xb @ beta)))
        grad = xb.T @ (w * (p - y)) + reg @ beta
        hess = (xb * (w * p * (1 - p))[:, None]).T @ xb + reg
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta


def _source_weights(prompts: list[Prompt], rows: list[int]) -> np.ndarray:
    """Each source (corpus, LOCOMO) and each side (related, unrelated) weighs the same."""
    keys = [(prompts[r]["source"], prompts[r]["related"]) for r in rows]
    counts = {k: keys.count(k) for k in set(keys)}
    return np.array([1.0 / counts[k] for k in keys])


W_OVERLAP = (0.0, 0.1, 0.2, 0.3, 0.4)
W_MARGIN = (0.0, 0.25, 0.5, 1.0)


def platt(prompts: list[Prompt]) -> tuple[float, float]:
    """P(related | cosine): the needed memory's cosine (related prompts) against the best
    cosine of an unrelated prompt (the pair that decides whether anything goes in)."""
    xs, ys, owners = [], [], []
    for i, p in enumerate(prompts):
        sig = p["signals"]
        if not sig or sig[0].dense is None:
            continue
        if p["related"]:
            found = [s.dense for s in sig if s.id in p["needed"] and s.dense is not None]
            if found:
                xs.append(max(found))
                ys.append(1.0)
                owners.append(i)
        else:
            xs.append(max(s.dense or 0.0 for s in sig))
            ys.append(0.0)
            owners.append(i)
    beta = logistic(np.array(xs)[:, None], np.array(ys), _source_weights(prompts, owners))
    return float(beta[1]), float(beta[0])


def fit(prompts: list[Prompt], false_target: float, max_memories: int) -> GateTuning:
    """The weights and threshold with the best mean useful share over the sources while
    every source's false share stays within the target; Platt scaling beside."""
    slope, offset = platt(prompts)
    sources = sorted({p["source"] for p in prompts})
    best: tuple[float, GateTuning] | None = None
    for w_overlap in W_OVERLAP:
        for w_margin in W_MARGIN:
            tuning = GateTuning(cosine_slope=round(slope, 3), cosine_offset=round(offset, 3),
                                w_overlap=w_overlap, w_margin=w_margin,
                                max_memories=max_memories)
            tuning = dataclasses.replace(
                tuning, threshold=choose_threshold(prompts, tuning, false_target))
            useful = float(np.mean([rates([p for p in prompts if p["source"] == src],
                                          tuning)["useful"] for src in sources]))
            if best is None or useful > best[0] + 1e-9:
                best = (useful, tuning)
    assert best is not None
    return best[1]


def choose_threshold(prompts: list[Prompt], tuning: GateTuning, false_target: float) -> float:
    """The lowest threshold (0.01 steps) whose false share stays within the target on
    every source: an unrelated prompt receives something when its best value passes."""
    lowest = 0.2
    for src in {p["source"] for p in prompts}:
        best = sorted((max((score(s, tuning) for s in p["signals"]), default=-1.0)
                       for p in prompts if p["source"] == src and not p["related"]),
                      reverse=True)
        allowed = int(false_target * len(best) + 1e-9)
        if allowed < len(best):
            # Just above the value of the first unrelated prompt that must be refused.
            lowest = max(lowest, math.floor(best[allowed] * 100 + 1) / 100)
    return round(lowest, 2)


def choose_floor(prompts: list[Prompt], false_target: float) -> float:
    for step in range(1, 21):
        f = round(0.05 * step, 2)
        tuning = GateTuning(lexical_floor=f)
        if all(rates([p for p in prompts if p["source"] == src], tuning)["false"]
               <= false_target for src in {p["source"] for p in prompts}):
            return f
    return 1.0


def injected(signals: list[Signals], tuning: GateTuning) -> list[str]:
    """What the gate lets in (what prompt_context keeps, before budget and session)."""
    verdicts = [decide(s, tuning) for s in signals]
    passed = sorted((v for v in verdicts if v.decision == "injected"),
                    key=lambda v: -v.score)
    return [v.id for v in passed[: tuning.max_memories]]


def rates(prompts: list[Prompt], tuning: GateTuning) -> dict[str, float]:
    related = [p for p in prompts if p["related"]]
    unrelated = [p for p in prompts if not p["related"]]
    useful = sum(bool(set(injected(p["signals"], tuning)) & p["needed"]) for p in related)
    false = sum(bool(injected(p["signals"], tuning)) for p in unrelated)
    return {"related": len(related), "unrelated": len(unrelated),
            "useful": useful / max(len(related), 1), "false": false / max(len(unrelated), 1)}


def cross_validate(prompts: list[Prompt], false_target: float, max_memories: int,
                   *, lexical: bool) -> list[dict[str, Any]]:
    rows = []
    for fold in range(FOLDS):
        train = [p for p in prompts if p["fold"] != fold]
        test = [p for p in prompts if p["fold"] == fold]
        if lexical:
            tuning = GateTuning(lexical_floor=choose_floor(train, false_target),
                                max_memories=max_memories)
        else:
            tuning = fit(train, false_target, max_memories)
        row: dict[str, Any] = {"fold": fold, "threshold": tuning.lexical_floor if lexical
                               else tuning.threshold}
        for src in ("corpus", "locomo"):
            r = rates([p for p in test if p["source"] == src], tuning)
            row[f"{src}_useful"], row[f"{src}_false"] = round(r["useful"], 3), round(r["false"], 3)
        rows.append(row)
    return rows


# -- the real entry points -----------------------------------------------------------------


def through_handle(memory: Memory, prompts: list[Prompt]) -> dict[str, Any]:
    """Each prompt through service.handle, a fresh session each; shares and tokens."""
    tokens: list[float] = []
    costs: list[float] = []
    useful = false = related = unrelated = 0
    by_class: dict[str, list[int]] = {}
    for n, p in enumerate(prompts):
        started = time.perf_counter()
        answer = handle(memory, {"op": "prompt", "namespace": p["ns"], "prompt": p["text"],
                                 "session_id": f"bench-{n}"})
        costs.append((time.perf_counter() - started) * 1000)
        p["answer"] = answer
        ids = set(answer["ids"])
        if answer["text"]:
            tokens.append(len(answer["text"]) / CHARS_PER_TOKEN)
        good = bool(ids & p["needed"]) if p["related"] else bool(ids)
        by_class.setdefault(p["cls"], [0, 0])
        by_class[p["cls"]][0] += good
        by_class[p["cls"]][1] += 1
        if p["related"]:
            related += 1
            useful += good
        else:
            unrelated += 1
            false += good
    return {"related": related, "unrelated": unrelated,
            "useful": round(useful / max(related, 1), 3),
            "false": round(false / max(unrelated, 1), 3),
            "tokens_p50": percentile(tokens, 50), "tokens_p95": percentile(tokens, 95),
            "ms_p50": round(percentile(costs, 50), 1), "ms_p95": round(percentile(costs, 95), 1),
            "load": [round(x, 1) for x in os.getloadavg()],
            "by_class": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_class.items())}}


def through_cli(home: Path, project: Path, prompts: list[Prompt]) -> dict[str, Any]:
    """The same prompts through the real hook process (keyword-only in process)."""
    env = {**os.environ, "AIDE_MEMOIRE_HOME": str(home), "AIDE_MEMOIRE_HOOK_DAEMON": "false",
           "PYTHONPATH": str(HERE.parent / "server")}
    env.pop("CLAUDE_PROJECT_DIR", None)
    same = 0
    for n, p in enumerate(prompts):
        payload = {"session_id": f"cli-{n}", "prompt": p["text"], "cwd": str(project),
                   "hook_event_name": "UserPromptSubmit"}
        done = subprocess.run(
            [sys.executable, "-m", "aide_memoire.cli.main", "hook", "user-prompt-submit"],
            input=json.dumps(payload), capture_output=True, text=True, env=env,
            cwd=str(project), timeout=60, check=False)
        same += done.stdout.strip() == str(p["answer"]["text"]).strip()
    return {"prompts": len(prompts), "same_as_handle": same}


# -- main ----------------------------------------------------------------------------------


def run_mode(args: argparse.Namespace, home: Path, samples: list[dict[str, Any]], *,
             lexical: bool) -> dict[str, Any]:
    settings = Settings(home=home, embedding_model="none") if lexical else Settings(home=home)
    project = home / "project"
    project.mkdir(exist_ok=True)
    namespace = project_for(project).namespace
    corpus = gate_corpus.load()
    started = time.perf_counter()
    with Memory(settings=settings) as memory:
        ids = store_corpus(memory, namespace, corpus,
                           gate_corpus.distractors(args.distractors),
                           locomo_distractor_turns(samples, args.locomo_distractors))
        observed = corpus_prompts(memory, namespace, corpus, ids)
        observed += locomo_prompts(memory, samples)
        if args.observations:
            args.observations.write_bytes(pickle.dumps(observed))
        tune = [p for p in observed if p["half"] == "tune"]
        held = [p for p in observed if p["source"] == "corpus" and p["half"] == "held"]
        cv = cross_validate(tune, args.false_target, GateTuning().max_memories,
                            lexical=lexical)
        if lexical:
            fitted = GateTuning(lexical_floor=choose_floor(tune, args.false_target))
        else:
            fitted = fit(tune, args.false_target, GateTuning().max_memories)
        locomo = [p for p in observed if p["source"] == "locomo"]
        result: dict[str, Any] = {
            "mode": "keyword-only" if lexical else "hybrid (model)",
            "fitted": dataclasses.asdict(fitted), "in_code": dataclasses.asdict(GateTuning()),
            "cv": cv,
            "held_out": through_handle(memory, held),
            "tune_corpus": through_handle(memory, [p for p in tune if p["source"] == "corpus"]),
            "locomo_dev": through_handle(memory, locomo),
        }
    if lexical and args.cli:
        result["cli"] = through_cli(home, project, held[: args.cli])
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def refit(args: argparse.Namespace, observed: list[Prompt]) -> None:
    """Fit and cross-validate on stored observations (no store, no handle)."""
    lexical = observed[0]["signals"][0].dense is None
    for p in observed:
        if p["source"] == "corpus":
            p["half"] = gate_corpus.split(p["group"])
    tune = [p for p in observed if p["half"] == "tune"]
    held = [p for p in observed if p["source"] == "corpus" and p["half"] == "held"]
    cv = cross_validate(tune, args.false_target, GateTuning().max_memories, lexical=lexical)
    print(table(list(cv[0]), [list(row.values()) for row in cv]))
    fitted = (GateTuning(lexical_floor=choose_floor(tune, args.false_target)) if lexical
              else fit(tune, args.false_target, GateTuning().max_memories))
    print(fitted)
    for name, tuning in (("fitted", fitted), ("in code", GateTuning())):
        print(name, "held out", rates(held, tuning), "locomo",
              rates([p for p in observed if p["source"] == "locomo"], tuning))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("locomo", type=Path)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--distractors", type=int, default=3000)
    parser.add_argument("--locomo-distractors", type=int, default=1000)
    parser.add_argument("--false-target", type=float, default=0.05)
    parser.add_argument("--cli", type=int, default=24,
                        help="held-out prompts also run through the hook process")
    parser.add_argument("--mode", choices=["both", "hybrid", "keyword"], default="both")
    parser.add_argument("--observations", type=Path, default=None,
                        help="pickle of the observed signals: written, or read to refit only")
    args = parser.parse_args()
    samples = json.loads(args.locomo.read_text(encoding="utf-8"))
    if args.observations and args.observations.exists():
        refit(args, pickle.loads(args.observations.read_bytes()))
        return
    results = []
    for lexical in ([False, True] if args.mode == "both" else [args.mode == "keyword"]):
        with tempfile.TemporaryDirectory() as tmp:
            results.append(run_mode(args, Path(tmp), samples, lexical=lexical))
    rows = []
    for r in results:
        for name in ("held_out", "tune_corpus", "locomo_dev"):
            m = r[name]
            rows.append([r["mode"], name, m["related"], m["useful"], m["unrelated"], m["false"],
                         m["tokens_p50"], m["tokens_p95"], m["ms_p50"], m["ms_p95"],
                         m["load"][0]])
    print(table(["gate", "material", "related", "needed injected", "unrelated",
                 "received anything", "tokens p50", "tokens p95", "handle ms p50",
                 "handle ms p95", "load"], rows))
    for r in results:
        print(f"\n{r['mode']}: cross-validated on the tuning material (5 folds)")
        print(table(list(r["cv"][0]), [list(row.values()) for row in r["cv"]]))
        print(f"held out by class: {r['held_out']['by_class']}")
        if "cli" in r:
            print(f"hook process agrees with handle on {r['cli']['same_as_handle']} of "
                  f"{r['cli']['prompts']} held-out prompts")
        print(f"fitted on all tuning material: {r['fitted']}")
        print(f"in code (used above):         {r['in_code']}")
    write_json(args.json, {"machine": machine(), "load": os.getloadavg(), "results": results})


if __name__ == "__main__":
    main()
