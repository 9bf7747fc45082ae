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
from aide_memoire.hooks.gate import GateTuning, companion_floor  # noqa: E402
from aide_memoire.hooks.prompt import (  # noqa: E402
    DENSE_CANDIDATES,
    HEADER,
    RECALL_LIMIT,
    gate_read,
    prompt_stems,
)
from aide_memoire.hooks.prompt import _line as line_of  # noqa: E402
from aide_memoire.hooks.service import handle  # noqa: E402
from hook_screen import narrowed  # noqa: E402
from locomo import CATEGORIES, ingest, parse_evidence, sessions, turn_text  # noqa: E402

FOLDS = 5
EARLIER_SESSION = "earlier-session"
# The grid the constants are chosen on (fit).
W_OVERLAP = (0.0, 0.1, 0.2, 0.3, 0.4)
W_MARGIN = (0.0, 0.25, 0.5, 1.0)
W_CLAUSE: tuple[float, ...] = (0.0, 0.5, 1.0)
CLAUSE_CANDIDATES = (3, 5)
COMPANION_GAP: tuple[float, ...] = (0.0, 0.1, 0.2)
# Late interaction (hooks/late.py): weight, offset, candidates read.
W_LATE: tuple[float, ...] = (0.0,)
LATE_OFFSET = (0.0, 0.2, 0.3, 0.4)
LATE_CANDIDATES = (3, 5, 8)
# The peak over the prompt's k-th densest row: weight, k.
W_GAP: tuple[float, ...] = (0.0,)
GAP_RANK = (5, 10)
# The prompt's spread (std of its cosine over the namespace): weight.
W_SPREAD: tuple[float, ...] = (0.0,)

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


# Observed with the clause cosines and the late-interaction scores read whatever their
# weights in code (a weight only scales them; which candidates get them does not depend on
# it: both are read for the best by the value without them), so a refit can weigh them.
OBSERVING = dataclasses.replace(GateTuning(), w_clause=max(GateTuning().w_clause, 1.0),
                                clause_candidates=max(CLAUSE_CANDIDATES),
                                w_late=max(GateTuning().w_late, 1.0), late_offset=0.0,
                                late_candidates=max(LATE_CANDIDATES))


def observe(memory: Memory, namespace: str, prompt: str) -> dict[str, Any]:
    """The gate's signals for ``prompt`` (the candidates and signals prompt_context reads,
    the dense list ``DENSE_OBSERVED`` wide so a refit can narrow it), and the prompt's
    dense profile: its mean, spread and the list's cosines, best first."""
    hits, found, profile = gate_read(memory, namespace, prompt, prompt_stems(prompt),
                                     OBSERVING, DENSE_OBSERVED[0])
    # The length of each candidate's injected line, for the tokens of a refit's choice.
    LINES.update({h.id: len(line_of(h)) + 1 for h in hits})
    return {"signals": found, "sides": [sorted(h.ranks) for h in hits],
            "profile": None if profile is None else {
                "mean": profile.mean, "std": profile.std, "rows": profile.rows,
                "best": [cosine for _, cosine in profile.best]}}


LINES: dict[str, int] = {}
# How many dense rows the observation reads (prompt.DENSE_CANDIDATES in code); set by
# --dense-observed.
DENSE_OBSERVED = [10]


def corpus_prompts(memory: Memory, namespace: str, corpus: gate_corpus.Corpus,
                   ids: dict[str, str], *, with_signals: bool = True) -> list[Prompt]:
    out: list[Prompt] = []
    for m in corpus.memories:
        styled = [(t, "original") for t in m.prompts] + [(t, "indirect") for t in m.indirect]
        for text, style in styled:
            out.append({"source": "corpus", "group": m.key, "cls": m.cls, "style": style,
                        "half": gate_corpus.split(m.key), "fold": _fold(m.key),
                        "related": True, "needed": {ids[m.key]}, "text": text,
                        "ns": namespace})
    for u in corpus.unrelated:
        out.append({"source": "corpus", "group": u.prompt, "cls": u.cls,
                    "half": gate_corpus.split(u.prompt), "fold": _fold(u.prompt),
                    "related": False, "needed": set(), "text": u.prompt, "ns": namespace})
    if with_signals:
        for p in out:
            p.update(observe(memory, namespace, p["text"]))
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
                        "ns": namespace, **observe(memory, namespace, qa["question"])})
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


@dataclasses.dataclass(frozen=True)
class Table:
    """Prompts' observed signals as padded arrays (one row per prompt), for the grid."""

    dense: np.ndarray  # -inf where a row has fewer candidates
    clause: np.ndarray  # nan where none was read
    late: np.ndarray  # nan where none was read
    kth: np.ndarray  # per prompt, its dense list's cosines best first (padded with the last)
    spread: np.ndarray  # per prompt, the std of its cosine over the namespace (0 without)
    overlap: np.ndarray
    margin: np.ndarray
    needed: np.ndarray  # bool: the candidate is a needed memory
    related: np.ndarray  # bool per prompt
    source: np.ndarray  # str per prompt
    lexical: bool


def table_of(prompts: list[Prompt]) -> Table:
    width = max((len(p["signals"]) for p in prompts), default=1) or 1
    shape = (len(prompts), width)
    dense = np.full(shape, -np.inf)
    clause = np.full(shape, np.nan)
    late = np.full(shape, np.nan)
    kth = np.zeros((len(prompts), max(GAP_RANK)))
    spread = np.zeros(len(prompts))
    lap, margin = np.zeros(shape), np.zeros(shape)
    needed = np.zeros(shape, dtype=bool)
    lexical = False
    for r, p in enumerate(prompts):
        best = (p.get("profile") or {}).get("best") or [0.0]
        kth[r] = [best[min(k, len(best)) - 1] for k in range(1, kth.shape[1] + 1)]
        spread[r] = (p.get("profile") or {}).get("std") or 0.0
        for c, sig in enumerate(p["signals"]):
            lexical = lexical or sig.dense is None
            dense[r, c] = 0.0 if sig.dense is None else sig.dense
            clause[r, c] = np.nan if sig.clause is None else sig.clause
            late[r, c] = np.nan if getattr(sig, "late", None) is None else sig.late
            lap[r, c], margin[r, c] = sig.overlap, sig.margin
            needed[r, c] = sig.id in p["needed"]
    return Table(dense, clause, late, kth, spread, lap, margin, needed,
                 np.array([p["related"] for p in prompts], dtype=bool),
                 np.array([p["source"] for p in prompts]), lexical)


def _best(value: np.ndarray, count: int) -> np.ndarray:
    """Per row, True for the ``count`` best candidates by ``value`` (the ones read)."""
    order = np.argsort(-value, axis=1, kind="stable")
    read = np.zeros(value.shape, dtype=bool)
    np.put_along_axis(read, order[:, :count], True, axis=1)
    return read


def values(t: Table, tuning: GateTuning) -> np.ndarray:
    """The gate's value of every candidate (gate.score; clause cosines masked to the
    ``clause_candidates`` best by the value without them, as prompt.with_clauses reads,
    and late scores to the ``late_candidates`` best by the value without either, as
    prompt.with_late reads)."""
    if t.lexical:
        return np.asarray(np.where(np.isinf(t.dense), -np.inf, t.overlap))
    plain = t.dense + tuning.w_overlap * t.overlap + tuning.w_margin * np.maximum(t.margin, 0)
    value = plain
    if tuning.w_clause > 0 and tuning.clause_candidates > 0:
        read = _best(plain, tuning.clause_candidates)
        lift = np.where(read & ~np.isnan(t.clause), np.maximum(t.clause - t.dense, 0), 0.0)
        value = value + tuning.w_clause * np.nan_to_num(lift)
    if tuning.w_late > 0 and tuning.late_candidates > 0:
        read = _best(plain, tuning.late_candidates)
        lift = np.where(read & ~np.isnan(t.late), np.maximum(t.late - tuning.late_offset, 0),
                        0.0)
        value = value + tuning.w_late * np.nan_to_num(lift)
    if tuning.w_gap > 0:
        gap = t.dense - t.kth[:, tuning.gap_rank - 1][:, None]
        value = value + tuning.w_gap * np.where(np.isinf(t.dense), 0.0, np.maximum(gap, 0))
    if tuning.w_spread > 0:
        value = value + tuning.w_spread * t.spread[:, None]
    return np.asarray(value)


def outcome(t: Table, tuning: GateTuning) -> tuple[np.ndarray, np.ndarray]:
    """Per prompt: whether a needed memory went in, and whether anything did (what
    prompt_context keeps, before budget and session rules)."""
    v = values(t, tuning)
    order = np.argsort(-v, axis=1, kind="stable")[:, : tuning.max_memories]
    top = np.take_along_axis(v, order, axis=1)
    need = np.take_along_axis(t.needed, order, axis=1)
    first, floor = ((tuning.lexical_floor, tuning.lexical_floor) if t.lexical
                    else (tuning.threshold, companion_floor(tuning)))
    anything = top[:, 0] >= first
    return anything & (need & (top >= floor)).any(axis=1), anything


def rates(t: Table, tuning: GateTuning) -> dict[str, float]:
    got, anything = outcome(t, tuning)
    related, unrelated = int(t.related.sum()), int((~t.related).sum())
    return {"related": related, "unrelated": unrelated,
            "useful": float(got[t.related].sum()) / max(related, 1),
            "false": float(anything[~t.related].sum()) / max(unrelated, 1)}


def by_source(t: Table) -> dict[str, Table]:
    out = {}
    for src in sorted(set(t.source.tolist())):
        rows = t.source == src
        out[str(src)] = Table(t.dense[rows], t.clause[rows], t.late[rows], t.kth[rows],
                              t.spread[rows], t.overlap[rows],
                              t.margin[rows],
                              t.needed[rows], t.related[rows], t.source[rows], t.lexical)
    return out


def _options() -> list[dict[str, Any]]:
    """The grid's clause and late-interaction settings (a weight of 0 needs no more)."""
    clause = [{"w_clause": w, "clause_candidates": k} for w in W_CLAUSE
              for k in (CLAUSE_CANDIDATES if w > 0 else (GateTuning().clause_candidates,))]
    late = [{"w_late": w, "late_offset": o, "late_candidates": k} for w in W_LATE
            for o in (LATE_OFFSET if w > 0 else (0.0,))
            for k in (LATE_CANDIDATES if w > 0 else (GateTuning().late_candidates,))]
    gap = [{"w_gap": w, "gap_rank": k} for w in W_GAP
           for k in (GAP_RANK if w > 0 else (GateTuning().gap_rank,))]
    return [{**c, **lt, **g, "w_spread": w} for c in clause for lt in late for g in gap
            for w in W_SPREAD]


def fit(prompts: list[Prompt], false_target: float, max_memories: int) -> GateTuning:
    """The weights, threshold and companion gap with the best mean useful share over the
    sources while every source's false share stays within the target (ties to the
    simpler: the grids run from none up); Platt scaling beside."""
    slope, offset = platt(prompts)
    parts = by_source(table_of(prompts))
    best: tuple[float, GateTuning] | None = None
    for option in _options():
        for w_overlap in W_OVERLAP:
            for w_margin in W_MARGIN:
                tuning = GateTuning(
                    cosine_slope=round(slope, 3), cosine_offset=round(offset, 3),
                    w_overlap=w_overlap, w_margin=w_margin, max_memories=max_memories,
                    **option)
                tuning = dataclasses.replace(
                    tuning, threshold=choose_threshold(parts, tuning, false_target))
                for gap in COMPANION_GAP:
                    tried = dataclasses.replace(tuning, companion_gap=gap)
                    useful = float(np.mean([rates(part, tried)["useful"]
                                            for part in parts.values()]))
                    if best is None or useful > best[0] + 1e-9:
                        best = (useful, tried)
    assert best is not None
    return best[1]


def choose_threshold(parts: dict[str, Table], tuning: GateTuning,
                     false_target: float) -> float:
    """The lowest threshold (0.01 steps) whose false share stays within the target on
    every source: an unrelated prompt receives something when its best value passes."""
    lowest = 0.2
    for part in parts.values():
        best = np.sort(values(part, tuning)[~part.related].max(axis=1, initial=-1.0))[::-1]
        allowed = int(false_target * len(best) + 1e-9)
        if allowed < len(best):
            # Just above the value of the first unrelated prompt that must be refused.
            lowest = max(lowest, math.floor(float(best[allowed]) * 100 + 1) / 100)
    return round(lowest, 2)


def choose_floor(prompts: list[Prompt], false_target: float) -> float:
    parts = by_source(table_of(prompts))
    for step in range(1, 21):
        f = round(0.05 * step, 2)
        tuning = GateTuning(lexical_floor=f)
        if all(rates(part, tuning)["false"] <= false_target for part in parts.values()):
            return f
    return 1.0


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
        parts = by_source(table_of(test))
        for src in ("corpus", "locomo"):
            if src not in parts:  # a fold of a small LOCOMO sample may hold none
                row[f"{src}_useful"] = row[f"{src}_false"] = None
                continue
            r = rates(parts[src], tuning)
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
        for key in (p["cls"], f"style:{p['style']}" if "style" in p else None):
            if key is not None:
                by_class.setdefault(key, [0, 0])
                by_class[key][0] += good
                by_class[key][1] += 1
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
            args.observations.write_bytes(pickle.dumps({"prompts": observed,
                                                        "lines": LINES}))
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


LATE_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)
GAP_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)
SPREAD_WEIGHTS = (0.0, 1.0, 2.0, 4.0, 8.0, 12.0, 16.0)
GRIDS: dict[str, tuple[tuple[float, ...], ...]] = {
    # name: (W_CLAUSE, COMPANION_GAP, W_LATE, W_GAP, W_SPREAD) searched; "main" is the
    # gate before clauses, companions, late interaction, the peak and the spread, the
    # others add some of them.
    "full": ((0.0, 0.5, 1.0), (0.0, 0.1, 0.2), (0.0,), (0.0,), (0.0,)),
    "no-clause": ((0.0,), (0.0, 0.1, 0.2), (0.0,), (0.0,), (0.0,)),
    "no-companion": ((0.0, 0.5, 1.0), (0.0,), (0.0,), (0.0,), (0.0,)),
    "main": ((0.0,), (0.0,), (0.0,), (0.0,), (0.0,)),
    "late": ((0.0,), (0.0,), LATE_WEIGHTS, (0.0,), (0.0,)),
    "late-companion": ((0.0,), (0.0, 0.1, 0.2), LATE_WEIGHTS, (0.0,), (0.0,)),
    "gap": ((0.0,), (0.0,), (0.0,), GAP_WEIGHTS, (0.0,)),
    "gap-late": ((0.0,), (0.0,), LATE_WEIGHTS, GAP_WEIGHTS, (0.0,)),
    "spread": ((0.0,), (0.0,), (0.0,), (0.0,), SPREAD_WEIGHTS),
    "spread-late": ((0.0,), (0.0,), LATE_WEIGHTS, (0.0,), SPREAD_WEIGHTS),
}


def placement(prompts: list[Prompt], tuning: GateTuning) -> dict[str, float]:
    """Where the needed memory sits among the related prompts' candidates, by the gate's
    value: a candidate at all, first, in the first ``max_memories``."""
    related = [p for p in prompts if p["related"]]
    t = table_of(related)
    v = np.where(t.needed, values(t, tuning), -np.inf).max(axis=1)
    above = (values(t, tuning) > v[:, None]).sum(axis=1)
    present = np.isfinite(v)
    n = max(len(related), 1)
    return {"candidate": round(float(present.sum()) / n, 3),
            "first": round(float((present & (above == 0)).sum()) / n, 3),
            "top_k": round(float((present & (above < tuning.max_memories)).sum()) / n, 3)}


def _shares(prompts: list[Prompt], tuning: GateTuning) -> str:
    """Held-out shares per style (related) and class (unrelated), as counts."""
    def key_of(p: Prompt) -> str:
        return str(p.get("style", p["cls"]) if p["related"] else "unrelated:" + p["cls"])

    out = []
    for key in sorted({key_of(p) for p in prompts}):
        group = [p for p in prompts if key_of(p) == key]
        got, anything = outcome(table_of(group), tuning)
        hits = got if group[0]["related"] else anything
        out.append(f"{key} {int(hits.sum())}/{len(group)}")
    return ", ".join(out)


def handle_again(args: argparse.Namespace, observed: list[Prompt]) -> None:
    """The held-out half through service.handle on a kept store, with the constants in
    code now (after a refit chose them)."""
    lexical = args.mode == "keyword"
    assert args.home is not None
    settings = (Settings(home=args.home, embedding_model="none") if lexical
                else Settings(home=args.home))
    held = [p for p in observed if p["source"] == "corpus" and p["half"] == "held"]
    with Memory(settings=settings) as memory:
        result = through_handle(memory, held)
    print(json.dumps(result, indent=1))
    write_json(args.json, {"machine": machine(), "load": os.getloadavg(),
                           "in_code": dataclasses.asdict(GateTuning()), "held_out": result})


def tokens(prompts: list[Prompt], tuning: GateTuning) -> tuple[float, float]:
    """Tokens p50 / p95 over the prompts that receive something (the lines' lengths as
    observed, the header, four characters a token; the budget never binds at three)."""
    t = table_of(prompts)
    v = values(t, tuning)
    order = np.argsort(-v, axis=1, kind="stable")[:, : tuning.max_memories]
    top = np.take_along_axis(v, order, axis=1)
    first, floor = ((tuning.lexical_floor, tuning.lexical_floor) if t.lexical
                    else (tuning.threshold, companion_floor(tuning)))
    counts = []
    for r, p in enumerate(prompts):
        if top[r, 0] < first:
            continue
        chosen = [p["signals"][c].id for c, value in zip(order[r], top[r], strict=True)
                  if value >= floor]
        counts.append((len(HEADER) + 1 + sum(LINES.get(i, 0) for i in chosen))
                      / CHARS_PER_TOKEN)
    return percentile(counts, 50), percentile(counts, 95)


def refit(args: argparse.Namespace, observed: list[Prompt]) -> None:
    """Fit and cross-validate on stored observations (no store, no handle)."""
    global W_CLAUSE, COMPANION_GAP, W_LATE, W_GAP, W_SPREAD
    W_CLAUSE, COMPANION_GAP, W_LATE, W_GAP, W_SPREAD = GRIDS[args.grid]
    lexical = observed[0]["signals"][0].dense is None
    observed = narrowed(observed, args.dense_candidates)
    print(f"candidates: recall's {RECALL_LIMIT} and {args.dense_candidates} dense rows")
    for p in observed:
        if p["source"] == "corpus":
            p["half"] = gate_corpus.split(p["group"])
    tune = [p for p in observed if p["half"] == "tune"]
    held = [p for p in observed if p["source"] == "corpus" and p["half"] == "held"]
    cv = cross_validate(tune, args.false_target, GateTuning().max_memories, lexical=lexical)
    print(f"grid {args.grid}: cross-validated on the tuning material (5 folds)")
    print(table(list(cv[0]), [list(row.values()) for row in cv]))
    print("mean", {k: round(float(np.mean([row[k] for row in cv if row[k] is not None])), 3)
                   for k in cv[0] if k != "fold"})
    fitted = (GateTuning(lexical_floor=choose_floor(tune, args.false_target)) if lexical
              else fit(tune, args.false_target, GateTuning().max_memories))
    print("fitted on all tuning material:", fitted)
    main_gate = dataclasses.replace(GateTuning(), w_clause=0.0, companion_gap=0.0,
                                    threshold=0.65, w_overlap=0.2, w_margin=1.0)
    locomo = [p for p in observed if p["source"] == "locomo"]
    for name, tuning in (("fitted", fitted), ("in code", GateTuning()),
                         ("main's gate", main_gate)):
        print(f"{name}: held out {rates(table_of(held), tuning)} tokens "
              f"{tokens(held, tuning)}\n  locomo "
              f"{rates(table_of(locomo), tuning)} tokens {tokens(locomo, tuning)}"
              f"\n  held out by style/class: "
              f"{_shares(held, tuning)}\n  needed memory placed (held out): "
              f"{placement(held, tuning)}, LOCOMO {placement(locomo, tuning)}")


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
    parser.add_argument("--home", type=Path, default=None,
                        help="keep the store there; with --observations of a run that "
                             "kept it, run only the held-out half through handle again")
    parser.add_argument("--grid", choices=sorted(GRIDS), default="full",
                        help="with --observations to refit: which parts of the grid")
    parser.add_argument("--dense-candidates", type=int, default=DENSE_CANDIDATES,
                        help="with --observations to refit: the dense rows a candidate "
                             "list holds (at most --dense-observed of the observing run)")
    parser.add_argument("--dense-observed", type=int, default=10,
                        help="dense rows added to recall's hits when observing (a refit "
                             "narrows them to the list in code)")
    parser.add_argument("--observations", type=Path, default=None,
                        help="pickle of the observed signals: written, or read to refit only")
    args = parser.parse_args()
    DENSE_OBSERVED[0] = args.dense_observed
    samples = json.loads(args.locomo.read_text(encoding="utf-8"))
    if args.observations and args.observations.exists():
        kept = pickle.loads(args.observations.read_bytes())
        if isinstance(kept, list):  # written before line lengths were kept
            kept = {"prompts": kept, "lines": {}}
        LINES.update(kept["lines"])
        if args.home:
            handle_again(args, kept["prompts"])
        else:
            refit(args, kept["prompts"])
        return
    results = []
    for lexical in ([False, True] if args.mode == "both" else [args.mode == "keyword"]):
        if args.home:
            args.home.mkdir(parents=True, exist_ok=True)
            results.append(run_mode(args, args.home, samples, lexical=lexical))
            continue
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
