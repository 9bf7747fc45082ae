"""Vague follow-ups ("same error as before"): would the session's last user turn help the gate?

    python bench/hook_followup.py [--distractors 1000] [--json out.json]

Material, from classes (issue 25, round 9): a running session of one earlier exchange (a
user turn, an assistant answer from a small class) stored as that session's turns, as the
capture hooks store them, then a follow-up prompt.
- related: the earlier turn is one of a corpus memory's prompts (its indirect one where it
  has one, else its last), the follow-up a vague prompt from ``VAGUE``; needed = the memory;
- unrelated "vague": the earlier turn an unrelated corpus prompt, the follow-up vague;
- unrelated "switch": the earlier turn about a memory, the follow-up an unrelated prompt
  (a new topic; the memory of the earlier turn is not wanted).
Each case's turns are forgotten after it. Halves: the corpus's fixed split (by memory key
or unrelated prompt), five folds by hash for CV on the tuning half.

Observed per case: what the real gate injects for the follow-up alone (prompt_context),
and the gate's value of each candidate of a second query, the earlier user turn plus the
follow-up (the running session's own turns left out), with the candidate's cosine to the
follow-up alone. Rule measured: when the follow-up holds at most ``terms`` content words,
a context candidate goes in when its value reaches ``context_threshold`` and its cosine to
the follow-up alone reaches ``agree`` (both agree). Fitted on four folds (false share <=
--false-target on both unrelated classes), scored on the fifth; the fit on the whole
tuning half is scored on the held-out half.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "hooks"))

import gate_corpus  # noqa: E402

from _common import machine, write_json  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402
from aide_memoire.engine.core.projects import project_for  # noqa: E402
from aide_memoire.hooks.gate import GateTuning, score  # noqa: E402
from aide_memoire.hooks.prompt import gate_read, prompt_context, prompt_stems  # noqa: E402

FOLDS = 5
VAGUE = (
    "same error as before", "that thing again?", "it's happening again", "still broken, any idea?",
    "ok and the other one?", "same problem here now", "it's back", "hm, again. what was it?",
    "didn't we hit this already?", "same as last time?", "any idea about that one?",
    "what was the fix for that?",
)
ANSWERS = ("Let me look into that.", "I'll check what is going on.", "Looking at it now.")
BUDGET = 400  # the hook_recall_tokens default
TERMS = (1, 2, 3)
CONTEXT_THRESHOLD = (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9)
AGREE = (-1.0, 0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)


def _pick(items: tuple[str, ...], key: str) -> str:
    return items[hashlib.sha256(key.encode()).digest()[0] % len(items)]


def _fold(text: str) -> int:
    return hashlib.sha256(("fold:" + text).encode()).digest()[0] % FOLDS


def cases(corpus: gate_corpus.Corpus) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    unrelated = [u.prompt for u in corpus.unrelated]
    for m in corpus.memories:
        earlier = m.indirect[0] if m.indirect else m.prompts[-1]
        out.append({"cls": "related", "key": m.key, "earlier": earlier,
                    "prompt": _pick(VAGUE, m.key)})
        out.append({"cls": "switch", "key": m.key, "earlier": earlier,
                    "prompt": _pick(tuple(unrelated), "switch:" + m.key)})
    for text in unrelated:
        out.append({"cls": "vague", "key": text, "earlier": text,
                    "prompt": _pick(VAGUE, "vague:" + text)})
    for c in out:
        c["half"] = gate_corpus.split(c["key"])
        c["fold"] = _fold(c["key"])
    return out


def observe(memory: Memory, namespace: str, case: dict[str, Any], number: int,
            ids: dict[str, str]) -> None:
    session = f"running-{number}"
    stored = memory.store_conversation(
        [{"speaker": "user", "content": case["earlier"]},
         {"speaker": "assistant", "content": _pick(ANSWERS, case["key"])}],
        namespace=namespace, session_id=session)
    tuning = GateTuning()
    # What the earlier turn got is seen: the follow-up never gets it again (as in the hook).
    before = prompt_context(memory, namespace, case["earlier"], budget_tokens=BUDGET,
                            session_id=session, tuning=tuning)
    alone = prompt_context(memory, namespace, case["prompt"], budget_tokens=BUDGET,
                           exclude=set(before.ids), session_id=session, tuning=tuning)
    with memory.internals.db.read() as conn:
        tail = memory.internals.store.session_tail(conn, namespace, session, 4)
    last_user = [t.content for t in tail if t.speaker == "user"][-1:]
    query = " ".join([*last_user, case["prompt"]])
    hits, found, _ = gate_read(memory, namespace, query, prompt_stems(query), tuning)
    keep = [(h, s) for h, s in zip(hits, found, strict=True)
            if h.session_id != session and h.id not in before.ids]
    embedder = memory.internals.services.recall.embedder
    vectors = np.asarray(embedder.encode([case["prompt"], *[h.content for h, _ in keep]]))
    own = vectors[1:] @ vectors[0] if keep else np.zeros(0)
    case["alone"] = set(alone.ids)
    case["earlier_got"] = set(before.ids)
    case["terms"] = len(prompt_stems(case["prompt"]))
    case["context"] = [(h.id, score(s, tuning), float(c)) for (h, s), c in
                       zip(keep, own, strict=True)]
    case["needed"] = {ids[case["key"]]} if case["cls"] == "related" else set()
    memory.forget_many(stored, namespace=namespace)


def through_gate(memory: Memory, namespace: str, items: list[dict[str, Any]],
                 tuning: GateTuning) -> list[dict[str, Any]]:
    """The cases again through prompt_context (what service.handle calls) with ``tuning``
    in place of the code's constants: what the follow-up gets, its own decisions only."""
    out = []
    for number, case in enumerate(items):
        session = f"again-{number}"
        stored = memory.store_conversation(
            [{"speaker": "user", "content": case["earlier"]},
             {"speaker": "assistant", "content": _pick(ANSWERS, case["key"])}],
            namespace=namespace, session_id=session)
        before = prompt_context(memory, namespace, case["earlier"], budget_tokens=BUDGET,
                                session_id=session, tuning=tuning)
        got = prompt_context(memory, namespace, case["prompt"], budget_tokens=BUDGET,
                             exclude=set(before.ids), session_id=session, tuning=tuning)
        out.append(dict(case, alone=set(got.ids), earlier_got=set(before.ids),
                        tokens=len(got.text) // 4 if got.ids else 0))
        memory.forget_many(stored, namespace=namespace)
    return out


def injected(case: dict[str, Any], rule: tuple[int, float, float] | None,
             max_memories: int = 3) -> set[str]:
    got = set(case["alone"])
    if rule is None or case["terms"] > rule[0]:
        return got
    passing = sorted(((v, i) for i, v, c in case["context"]
                      if v >= rule[1] and c >= rule[2]), reverse=True)
    for _, memory_id in passing:
        if len(got) >= max_memories:
            break
        got.add(memory_id)
    return got


def shares(items: list[dict[str, Any]], rule: tuple[int, float, float] | None,
           ) -> dict[str, float]:
    out: dict[str, float] = {}
    for cls in ("related", "vague", "switch"):
        group = [c for c in items if c["cls"] == cls]
        if not group:
            continue
        if cls == "related":
            hit = [bool(c["needed"] & injected(c, rule)) for c in group]
            wrong = [bool(injected(c, rule) - c["needed"]) and not (c["needed"] & injected(c, rule))
                     for c in group]
            out["useful"] = round(float(np.mean(hit)), 3)
            out["only_wrong"] = round(float(np.mean(wrong)), 3)
            out["earlier"] = round(float(np.mean([bool(c["needed"] & c["earlier_got"])
                                                  for c in group])), 3)
            # Among the related follow-ups whose memory the earlier turn did not bring.
            fresh = [h for h, c in zip(hit, group, strict=True)
                     if not c["needed"] & c["earlier_got"]]
            out["useful_not_earlier"] = round(float(np.mean(fresh)), 3) if fresh else 0.0
        else:
            out[f"false_{cls}"] = round(float(np.mean([bool(injected(c, rule))
                                                       for c in group])), 3)
        out[f"n_{cls}"] = len(group)
    return out


def fit(items: list[dict[str, Any]], false_target: float) -> tuple[int, float, float] | None:
    best: tuple[float, tuple[int, float, float] | None] = (shares(items, None)["useful"], None)
    for rule in itertools.product(TERMS, CONTEXT_THRESHOLD, AGREE):
        got = shares(items, rule)
        if max(got["false_vague"], got["false_switch"]) > false_target:
            continue
        if got["useful"] > best[0] + 1e-9:
            best = (got["useful"], rule)
    return best[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--distractors", type=int, default=1000)
    parser.add_argument("--false-target", type=float, default=0.05)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    corpus = gate_corpus.load()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        project = home / "project"
        project.mkdir()
        namespace = project_for(project).namespace
        with Memory(settings=Settings(home=home)) as memory:
            items = [{"content": t, "kind": "learning" if i % 3 else "note"}
                     for i, t in enumerate(gate_corpus.distractors(args.distractors))]
            for start in range(0, len(items), 256):
                memory.store_many(items[start : start + 256], namespace=namespace)
            ids = {m.key: memory.store(m.content, namespace=namespace, kind=m.kind)
                   for m in corpus.memories}
            all_cases = cases(corpus)
            for number, case in enumerate(all_cases):
                observe(memory, namespace, case, number, ids)
            tune = [c for c in all_cases if c["half"] == "tune"]
            held = [c for c in all_cases if c["half"] == "held"]
            rule = fit(tune, args.false_target)
            real: dict[str, Any] = {}
            if rule is not None:
                tuning = dataclasses.replace(GateTuning(), context_terms=rule[0],
                                             context_threshold=rule[1])
                again = through_gate(memory, namespace, held, tuning)
                given = [c["tokens"] for c in again if c["tokens"]]
                real = {"tuning": {"context_terms": rule[0], "context_threshold": rule[1],
                                   "agree_not_in_code": rule[2]},
                        **shares(again, None),
                        "tokens_p50": float(np.percentile(given, 50)) if given else 0.0,
                        "tokens_p95": float(np.percentile(given, 95)) if given else 0.0}
    folds = []
    for fold in range(FOLDS):
        rule = fit([c for c in tune if c["fold"] != fold], args.false_target)
        folds.append({"rule": rule, **shares([c for c in tune if c["fold"] == fold], rule)})
    cv_cases = []
    for fold, f in enumerate(folds):
        cv_cases += [dict(c, fold_rule=f["rule"]) for c in tune if c["fold"] == fold]
    cv = {"off": shares(tune, None)}
    pooled: dict[str, list[bool]] = {"useful": [], "false_vague": [], "false_switch": []}
    for c in cv_cases:
        got = injected(c, c["fold_rule"])
        if c["cls"] == "related":
            pooled["useful"].append(bool(c["needed"] & got))
        else:
            pooled[f"false_{c['cls']}"].append(bool(got))
    cv["on"] = {k: round(float(np.mean(v)), 3) for k, v in pooled.items()}
    result = {"machine": machine(), "distractors": args.distractors,
              "false_target": args.false_target, "folds": folds, "cv": cv,
              "fitted": rule, "held_off": shares(held, None), "held_on": shares(held, rule),
              "held_through_prompt_context": real,
              "tune_off": shares(tune, None), "tune_on": shares(tune, rule),
              "seconds": round(time.perf_counter() - started, 1)}
    if args.json:
        write_json(args.json, result)
    print(result)


if __name__ == "__main__":
    main()
