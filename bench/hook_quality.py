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

Tuning (on the tuning half and LOCOMO only): for each set of weights on a small grid
(the clause cosine's share in relevance, overlap, margin), the threshold is the lowest
whose false share stays within ``--false-target`` on each source (the best candidate
alone decides whether an unrelated prompt receives anything); then the companion gap
(how far below the threshold the others may go in beside it) and the weights with the
best mean useful share win (the grid runs vectorised, class Grid; rates() recomputes the
chosen tuning through gate.decide_all itself). The cosine's Platt scaling (the
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
from aide_memoire.hooks.gate import (  # noqa: E402
    GateTuning,
    Signals,
    decide_all,
    relevance,
    signals,
)
from aide_memoire.hooks.prompt import (  # noqa: E402
    candidates,
    hit_signals,
    prompt_stems,
    segment_cosines,
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
    """The gate's signals for ``prompt``: the candidates, clause cosines and signals
    prompt_context reads (margins as GateTuning's w_segment makes them; refit() remakes
    them for other weights)."""
    hits, profile = candidates(memory, namespace, prompt)
    cut = segment_cosines(memory, prompt, hits) if profile is not None else None
    return hit_signals(hits, prompt_stems(prompt), profile, cut)


def remargin(found: list[Signals], tuning: GateTuning) -> list[Signals]:
    """The same signals with margins over relevance as ``tuning`` mixes it."""
    if not found or found[0].dense is None:
        return found
    again = signals([s.id for s in found], [s.kind for s in found],
                    [s.dense for s in found], [s.overlap for s in found],
                    [s.segment for s in found], tuning)
    return [dataclasses.replace(s, margin=n.margin) for s, n in zip(found, again, strict=True)]


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


W_SEGMENT = (0.0, 0.5, 1.0)
W_OVERLAP = (0.0, 0.1, 0.2, 0.3, 0.4)
W_MARGIN = (0.0, 0.25, 0.5, 1.0)
GAPS = (0.0, 0.05, 0.1, 0.2, 1.0)


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


class Grid:
    """The prompts' signals as padded arrays, for the weight grid (the same arithmetic as
    gate.score and gate.decide_all, vectorised; rates() checks the chosen one the slow,
    real way)."""

    def __init__(self, prompts: list[Prompt], tuning: GateTuning) -> None:
        width = max(len(p["signals"]) for p in prompts)
        shape = (len(prompts), width)
        self.rel = np.full(shape, -9.0)
        self.ov = np.zeros(shape)
        self.mpos = np.zeros(shape)
        self.needed = np.zeros(shape, dtype=bool)
        for row, p in enumerate(prompts):
            for col, sig in enumerate(remargin(p["signals"], tuning)):
                self.rel[row, col] = relevance(sig.dense or 0.0, sig.segment, tuning)
                self.ov[row, col] = sig.overlap
                self.mpos[row, col] = max(sig.margin, 0.0)
                self.needed[row, col] = sig.id in p["needed"]
        self.related = np.array([p["related"] for p in prompts])
        self.source = np.array([p["source"] for p in prompts])

    def scores(self, tuning: GateTuning) -> np.ndarray:
        return self.rel + tuning.w_overlap * self.ov + tuning.w_margin * self.mpos

    def threshold(self, sc: np.ndarray, false_target: float) -> float:
        """The lowest threshold (0.01 steps) whose false share stays within the target on
        every source: an unrelated prompt receives something when its best passes."""
        lowest = 0.2
        best = sc.max(axis=1)
        for src in set(self.source.tolist()):
            values = np.sort(best[(self.source == src) & ~self.related])[::-1]
            allowed = int(false_target * len(values) + 1e-9)
            if allowed < len(values):
                lowest = max(lowest, math.floor(values[allowed] * 100 + 1) / 100)
        return round(lowest, 2)

    def useful(self, sc: np.ndarray, tuning: GateTuning) -> dict[str, float]:
        """Per source, the share of related prompts whose needed memory goes in."""
        k = tuning.max_memories
        order = np.argsort(-sc, axis=1, kind="stable")[:, :k]
        top = np.take_along_axis(sc, order, axis=1)
        need = np.take_along_axis(self.needed, order, axis=1)
        passes = sc.max(axis=1) >= tuning.threshold
        inside = top >= tuning.threshold - tuning.companion_gap
        got = passes & (need & inside).any(axis=1)
        return {src: float(got[(self.source == src) & self.related].mean())
                for src in sorted(set(self.source.tolist()))}


def fit(prompts: list[Prompt], false_target: float, max_memories: int) -> GateTuning:
    """The weights, gap and threshold with the best mean useful share over the sources
    while every source's false share stays within the target; Platt scaling beside."""
    slope, offset = platt(prompts)
    best: tuple[float, GateTuning] | None = None
    for w_segment in W_SEGMENT:
        base = GateTuning(cosine_slope=round(slope, 3), cosine_offset=round(offset, 3),
                          w_segment=w_segment, max_memories=max_memories)
        grid = Grid(prompts, base)
        for w_overlap in W_OVERLAP:
            for w_margin in W_MARGIN:
                weights = dataclasses.replace(base, w_overlap=w_overlap, w_margin=w_margin)
                sc = grid.scores(weights)
                weights = dataclasses.replace(
                    weights, threshold=grid.threshold(sc, false_target))
                for gap in GAPS:
                    tuning = dataclasses.replace(weights, companion_gap=gap)
                    useful = float(np.mean(list(grid.useful(sc, tuning).values())))
                    # Ties go to the smaller gap (fewer tokens) and the simpler weights.
                    if best is None or useful > best[0] + 1e-9:
                        best = (useful, tuning)
    assert best is not None
    return best[1]


def choose_floor(prompts: list[Prompt], false_target: float) -> float:
    for step in range(1, 21):
        f = round(0.05 * step, 2)
        tuning = GateTuning(lexical_floor=f)
        if all(rates([p for p in prompts if p["source"] == src], tuning)["false"]
               <= false_target for src in {p["source"] for p in prompts}):
            return f
    return 1.0


def injected(found: list[Signals], tuning: GateTuning) -> list[str]:
    """What the gate lets in (what prompt_context keeps, before budget and session)."""
    verdicts = decide_all(remargin(found, tuning), tuning)
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


def gate_cost(memory: Memory, prompts: list[Prompt]) -> dict[str, Any]:
    """The whole prompt operation (service.handle) per prompt, first with the clause
    cache emptied before every prompt (every candidate's clauses encoded anew: the worst
    case, a server's first prompts), then again as the warm process meets it (the cache
    kept); with the clauses encoded per prompt."""
    kept = memory.internals.services.recall.segments
    out: dict[str, Any] = {"prompts": len(prompts)}
    # The clauses' own share, alternated prompt by prompt with the whole operation so
    # that the machine's load falls on both alike: segment_cosines over the very
    # candidates handle reads, with the cache emptied (a first meeting).
    alone: list[float] = []
    for p in prompts:
        hits, _ = candidates(memory, p["ns"], p["text"])
        kept.clear()
        started = time.perf_counter()
        segment_cosines(memory, p["text"], hits)
        alone.append((time.perf_counter() - started) * 1000)
    out["segments_alone_cold"] = {"ms_p50": round(percentile(alone, 50), 1),
                                  "ms_p95": round(percentile(alone, 95), 1),
                                  "load": [round(x, 1) for x in os.getloadavg()]}
    for case in ("cold_cache", "warm_cache"):
        costs: list[float] = []
        encoded: list[float] = []
        for n, p in enumerate(prompts):
            if case == "cold_cache":
                kept.clear()
            before = kept.encoded
            started = time.perf_counter()
            handle(memory, {"op": "prompt", "namespace": p["ns"], "prompt": p["text"],
                            "session_id": f"cost-{case}-{n}"})
            costs.append((time.perf_counter() - started) * 1000)
            encoded.append(float(kept.encoded - before))
        out[case] = {"ms_p50": round(percentile(costs, 50), 1),
                     "ms_p95": round(percentile(costs, 95), 1),
                     "clauses_encoded_p50": percentile(encoded, 50),
                     "clauses_encoded_p95": percentile(encoded, 95),
                     "load": [round(x, 1) for x in os.getloadavg()]}
    return out


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


def through_mcp(home: Path, project: Path, prompts: list[Prompt]) -> dict[str, Any]:
    """The same prompts through the real `mcp_tool` path: `hook_prompt` called on the
    stdio session of a real `aide-memoire serve` process (the plugin's server) started in
    the project, once its model is loaded; the text must be what ``handle`` returned."""
    import hooks as hook_bench  # bench/hooks.py: its console script and stdio session

    with tempfile.TemporaryDirectory() as scripts:
        command = hook_bench.console_script(Path(scripts))
        session = hook_bench.McpSession(hook_bench.Hooks(home, command), command, project)
        try:
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:
                status = session.request("tools/call", {"name": "memory_status",
                                                        "arguments": {}})
                stages = status.get("result", {}).get("structuredContent", {}).get(
                    "stages", [])
                if any(st.get("name") == "dense" and "loaded" in st.get("detail", "")
                       for st in stages):
                    break
                time.sleep(2)
            same = 0
            times: list[float] = []
            for n, p in enumerate(prompts):
                ms, text = session.hook_prompt(p["text"], f"mcp-{n}")
                times.append(ms)
                same += text.strip() == str(p["answer"]["text"]).strip()
        finally:
            session.close()
    return {"prompts": len(prompts), "same_as_handle": same,
            "ms_p50": round(percentile(times, 50), 1), "ms_p95": round(percentile(times, 95), 1),
            "load": [round(x, 1) for x in os.getloadavg()]}


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
        if args.only_cost:
            held = [p for p in corpus_prompts(memory, namespace, corpus, ids,
                                              with_signals=False) if p["half"] == "held"]
            out: dict[str, Any] = {"mode": "hybrid (model)",
                                   "gate_cost": gate_cost(memory, held[: args.cost])}
            if args.cli:
                out["handle_sample"] = through_handle(memory, held[: args.cli])
                out["mcp"] = through_mcp(home, project, held[: args.cli])
            out["seconds"] = round(time.perf_counter() - started, 1)
            return out
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
        if not lexical and args.cost:
            result["gate_cost"] = gate_cost(memory, held[: args.cost])
    if lexical and args.cli:
        result["cli"] = through_cli(home, project, held[: args.cli])
    if not lexical and args.cli:
        result["mcp"] = through_mcp(home, project, held[: args.cli])
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
    parser.add_argument("--cost", type=int, default=120,
                        help="held-out prompts timed with the clause cache cold and warm")
    parser.add_argument("--only-cost", action="store_true",
                        help="store the corpus and time --cost held-out prompts only")
    parser.add_argument("--mode", choices=["both", "hybrid", "keyword"], default="both")
    parser.add_argument("--observations", type=Path, default=None,
                        help="pickle of the observed signals: written, or read to refit only")
    args = parser.parse_args()
    samples = json.loads(args.locomo.read_text(encoding="utf-8"))
    if args.observations and args.observations.exists():
        refit(args, pickle.loads(args.observations.read_bytes()))
        return
    results = []
    modes = [False, True] if args.mode == "both" else [args.mode == "keyword"]
    for lexical in [False] if args.only_cost else modes:
        with tempfile.TemporaryDirectory() as tmp:
            results.append(run_mode(args, Path(tmp), samples, lexical=lexical))
    if args.only_cost:
        print(json.dumps({k: v for k, v in results[0].items() if k != "handle_sample"},
                         indent=1))
        write_json(args.json, {"machine": machine(), "load": os.getloadavg(),
                               "results": results})
        return
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
        if "gate_cost" in r:
            print(f"gate cost per prompt (service.handle): {r['gate_cost']}")
        if "cli" in r:
            print(f"hook process agrees with handle on {r['cli']['same_as_handle']} of "
                  f"{r['cli']['prompts']} held-out prompts")
        if "mcp" in r:
            print(f"mcp_tool (hook_prompt on a real server) agrees with handle on "
                  f"{r['mcp']['same_as_handle']} of {r['mcp']['prompts']} held-out prompts")
        print(f"fitted on all tuning material: {r['fitted']}")
        print(f"in code (used above):         {r['in_code']}")
    write_json(args.json, {"machine": machine(), "load": os.getloadavg(), "results": results})


if __name__ == "__main__":
    main()
