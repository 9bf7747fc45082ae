"""Decide each of issue 31's defaults by the written rule, on one conversation benchmark.

    python bench/locomo_decide.py PATH/locomo-dev.json [--cache FILE] [--json FILE]
    python bench/locomo_decide.py bench/data/personas.json --cache FILE

For every change (the query-adaptive keyword weight, the dense query as a statement, each
stage after fusion), leave-one-conversation-out CV gives every question a held-out rank
with the change (each fold choosing the change's values, and the keyword weight, on the
other conversations) and without it (the same grid, the change off); the two are compared
by the paired tests of bench/_paired.py (docs/benchmarks.md, issue 31 third round). The
retrieval variants (a different dense query) are retrieved in the same ingest. Prints,
per change: turn-level hit@1/10/50 and MRR and session-level s-hit@1/3/5 per category,
in sample (at the value all conversations choose) and CV, before and after, and the
verdict. Ranks come from the engine's own fuse, prefer_timed and stages
(locomo_cv.engine_rank), so what is decided is the code recall runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, table, write_json  # noqa: E402
from _paired import paired, temporal_anywhere  # noqa: E402
from aide_memoire.engine.core.text import (  # noqa: E402
    addresses_someone,
    named_words,
    names_something,
    query_shape,
    query_terms,
    states_change,
)
from aide_memoire.engine.recall.fusion import RecallTuning, fuse, prefer_timed  # noqa: E402
from aide_memoire.engine.recall.stages import (  # noqa: E402
    RowFact,
    bridge_names,
    lift_addressed,
    lift_sessions,
    prefer_dated,
    prefer_named,
    prefer_recent,
    prefer_restated,
)
from locomo import CATEGORIES  # noqa: E402
from locomo_cv import (  # noqa: E402
    NOT_FOUND,
    Question,
    _knob_values,
    collect,
    dump_cache,
    load_cache,
)

# Retrieval variants: each needs its own pass of the retrievers (index 0: the defaults).
VARIANTS: dict[str, dict[str, Any]] = {
    "asked": {},
    "statement": {"dense_query_form": "statement"},
    # Dense pseudo-relevance feedback (issue 31, fourth round): (best rows, weight).
    **{f"feedback {docs} x {weight}": {"dense_feedback_docs": docs,
                                       "dense_feedback_weight": weight}
       for docs in (3, 5) for weight in (0.5, 1.0)},
}
# The keyword weight every fold also chooses (the fusion constant the changes interact with).
WEIGHTS = [0.45, 0.55, 0.65]
# Each change: (retrieval variant, the knob values it is tried at; the first is "off").
# The views: a retrieval variant with a rule for time questions ("before": the old one).
CHANGES: dict[str, tuple[str, str, list[Any]]] = {
    "time questions by their opening": ("opening", "", [None]),
    "query-adaptive keyword weight": ("before", "adaptive_keyword", [0.0, 0.5, 1.0]),
    "dense query as a statement": ("statement", "", [None]),
    "session stage": ("before", "session_weight", [0.0, 0.05, 0.1, 0.2]),
    "time in the question": ("before", "dated_weight", [0.0, 0.05, 0.1, 0.2]),
    "name bridge": ("before", "bridge_weight", [0.0, 0.05, 0.1, 0.2]),
    "name stage": ("before", "named_weight", [0.0, 0.05, 0.1, 0.2]),
    "recency stage": ("before", "recency_weight", [0.0, 0.1, 0.2]),
}
SESSION_KS = (1, 3, 5)
# Issue 31's fourth round (--against-now): each change scored against the defaults as they
# stand (not those before the third round), as options of (retrieval variant, knobs); the
# first option is "off". The keyword weight is chosen per fold beside them, as above.
_FEEDBACK = [v for v in VARIANTS if v.startswith("feedback")]
_STAGES = [{"session_weight": s, "bridge_weight": b}
           for s in (0.0, 0.05, 0.1, 0.2) for b in (0.0, 0.05, 0.1, 0.2)]
NOW_CHANGES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "adaptive signal: agreement": [("asked", {}), ("asked", {"adaptive_signal": "agreement"})],
    "adaptive signal: margin": [("asked", {}), ("asked", {"adaptive_signal": "margin"})],
    "adaptive signal: unnamed": [("asked", {}), ("asked", {"adaptive_signal": "unnamed"})],
    "adaptive signal, chosen per fold": [
        ("asked", {"adaptive_signal": a})
        for a in ("coverage", "agreement", "margin", "unnamed")],
    "adaptive weight off": [("asked", {}), ("asked", {"adaptive_keyword": 0.0})],
    # Issue 28, round 9: the coverage as the share of the query's idf mass a row holds.
    "coverage basis: terms": [("asked", {}), ("asked", {"coverage_basis": "terms"})],
    "coverage basis: terms, always": [("asked", {"coverage_basis": "terms"})],
    "dense feedback": [("asked", {}), *((v, {}) for v in _FEEDBACK)],
    "session stage": [("asked", {"session_weight": w}) for w in (0.0, 0.05, 0.1, 0.2)],
    "name bridge": [("asked", {"bridge_weight": w}) for w in (0.0, 0.05, 0.1, 0.2)],
    "session stage + bridge": [("asked", k) for k in _STAGES],
    "dense feedback + session stage + bridge": [
        (v, k) for v in ("asked", *_FEEDBACK) for k in _STAGES],
}


# Every stage reads only the leading candidates (at most session_depth = 100 of them) and
# only adds to their scores, so the best LEADING of fusion's order hold every row that
# can end in the first 50: the stages run on those (exact, and far quicker).
LEADING = 200
_FUSED: dict[tuple[Any, ...], dict[int, float]] = {}


def _fusion_key(t: RecallTuning) -> tuple[Any, ...]:
    return (t.keyword_weight, t.adaptive_keyword, t.speaker_boost, t.timed_boost,
            t.timed_depth, t.keyword_scale, t.dense_scale, t.agreement_bonus,
            t.agreement_depth, t.feedback_weight, t.identifier_keyword_weight,
            t.adaptive_signal, t.coverage_basis)


def ordering(q: Question, tuning: RecallTuning, content: dict[int, str],
             facts: dict[int, RowFact], query: str) -> list[int]:
    """The candidates in the order recall gives them (fusion, then every stage, in
    recaller.recall's order)."""
    def known(rows: Any) -> dict[int, RowFact]:
        return {r: facts[r] for r in rows if r in facts}

    key = (id(q), *_fusion_key(tuning))
    fused = _FUSED.get(key)
    if fused is None:
        whole = prefer_timed(fuse(q.found, tuning), q.found.shape, tuning,
                             lambda rows: {r: content.get(r, "") for r in rows})
        lead = sorted(whole, key=lambda r: (-whole[r], r))[:LEADING]
        fused = _FUSED[key] = {r: whole[r] for r in lead}
    fused = lift_sessions(fused, known, tuning)
    fused = prefer_dated(fused, query, known, tuning)
    fused = bridge_names(fused, set(query_terms(query)), known, tuning)
    fused = lift_addressed(fused, q.found.speaker_rows, known, tuning)
    if q.found.dense_live:  # as recaller.recall: the name stage only with the dense side
        fused = prefer_named(fused, q.found.shape, known, tuning)
    fused = prefer_recent(fused, q.found.shape, known, tuning)
    fused = prefer_restated(fused, q.found.shape, q.found.speaker_rows, known, tuning)
    return sorted(fused, key=lambda r: (-fused[r], r))


def ranks_of(q: Question, order: list[int], facts: dict[int, RowFact]) -> tuple[int, int]:
    """(rank of the first evidence turn, rank of the first evidence session among the
    sessions in the order of their first turn recalled), NOT_FOUND past 50 turns."""
    wanted = {int(q.rowids[j]) for j in q.evidence}
    sessions = {facts[r].session for r in wanted if r in facts}
    turn = next((i for i, r in enumerate(order[:50], 1) if r in wanted), NOT_FOUND)
    seen: list[str | None] = []
    for r in order[:50]:
        s = facts[r].session if r in facts else None
        if s not in seen:
            seen.append(s)
    session = next((i for i, s in enumerate(seen, 1) if s in sessions), NOT_FOUND)
    return turn, session


def figures(turn: np.ndarray, session: np.ndarray) -> dict[str, float]:
    return {"n": int(len(turn)), "hit@1": float(np.mean(turn <= 1)),
            "hit@10": float(np.mean(turn <= 10)), "hit@50": float(np.mean(turn <= 50)),
            "mrr": float(np.mean(np.where(turn <= 50, 1.0 / turn, 0.0))),
            **{f"s-hit@{k}": float(np.mean(session <= k)) for k in SESSION_KS}}


def per_category(turn: np.ndarray, session: np.ndarray, cats: np.ndarray
                 ) -> dict[str, dict[str, float]]:
    out = {"overall": figures(turn, session)}
    for number, name in CATEGORIES.items():
        if np.any(cats == number):
            out[name] = figures(turn[cats == number], session[cats == number])
    return out


def cv(ranks: np.ndarray, sranks: np.ndarray, conv: np.ndarray) -> tuple[np.ndarray,
                                                                       np.ndarray, list[int]]:
    """Held-out turn and session ranks: each fold takes the tuning (row) with the best
    hit@10 + MRR on the other conversations (the first best: grid order)."""
    objective = (ranks <= 10) + np.where(ranks <= 50, 1.0 / ranks, 0.0)
    held, sheld, chosen = np.zeros(ranks.shape[1], np.int64), np.zeros(ranks.shape[1],
                                                                         np.int64), []
    for fold in sorted(set(conv.tolist())):
        train = conv != fold
        best = int(np.argmax(objective[:, train].mean(axis=1)))
        held[~train], sheld[~train] = ranks[best, ~train], sranks[best, ~train]
        chosen.append(best)
    return held, sheld, chosen


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, help="a LOCOMO-format JSON file")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep the retrieved candidates here (one file per data file)")
    parser.add_argument("--json", type=Path, default=None, help="also write the result here")
    parser.add_argument("--only-after", action="store_true",
                        help="score before and the defaults now only (no change one by one)")
    parser.add_argument("--against-now", action="store_true",
                        help="score the fourth round's changes against the defaults now")
    parser.add_argument("--only", action="append", default=[], metavar="CHANGE",
                        help="with --against-now: score only these changes")
    parser.add_argument("--asked-only", action="store_true",
                        help="with --against-now: retrieve the question as asked only (the "
                        "changes of fusion need no other retrieval variant)")
    parser.add_argument("--set", action="append", default=[], metavar="KNOB=VALUE",
                        help="a default changed for 'after', e.g. adaptive_keyword=0.5")
    args = parser.parse_args()
    base = replace(RecallTuning(), **_knob_values(args.set))
    # The defaults before issue 31's third round (with the "before" view's rule for time
    # questions): a fixed keyword weight, every stage off, the query encoded as asked.
    off = replace(base, session_weight=0.0, recency_weight=0.0, named_weight=0.0,
                  restated_depth=0, dated_weight=0.0, bridge_weight=0.0,
                  adaptive_keyword=0.0, dense_query_form="asked")
    # coverage_basis "terms" only fills Candidates.keyword_held, which fusion reads for
    # that basis alone: collected once, both bases are scored from the same candidates.
    collect_as = replace(off, keyword_scale="ideal", coverage_basis="terms")
    retrieve = ["asked"] if args.asked_only else list(VARIANTS)
    variants = [replace(collect_as, **VARIANTS[name]) for name in retrieve]
    cached = load_cache(args.cache, len(variants)) if args.cache and args.cache.exists() else None
    if cached is None:
        with tempfile.TemporaryDirectory() as tmp:
            cached = collect(args.path, Path(tmp), variants)
        if args.cache is not None:
            dump_cache(args.cache, *cached)
    sets, content, facts = cached
    facts = {r: replace(f, named=names_something(t), addresses=addresses_someone(t),
                        changes=states_change(t), names=named_words(t))
             for r, f in facts.items() if (t := content.get(r, "")) is not None}
    queries = json.loads(args.path.read_text(encoding="utf-8"))
    asked = _questions(queries)
    retrieved = dict(zip(retrieve, sets, strict=True))

    def shaped(questions: list[Question], anywhere: bool) -> list[Question]:
        out = []
        for q, text in zip(questions, asked, strict=True):
            shape = query_shape(text)
            if anywhere:
                shape = replace(shape, temporal=temporal_anywhere(text))
            out.append(replace(q, found=replace(q.found, shape=shape)))
        return out

    by_variant = {"before": shaped(retrieved["asked"], True),
                  "opening": shaped(retrieved["asked"], False),
                  **({"statement": shaped(retrieved["statement"], True)}
                     if "statement" in retrieved else {}),
                  **{v: shaped(retrieved[v], False) for v in _FEEDBACK if v in retrieved}}
    cats = np.array([q.category for q in sets[0]])
    conv = np.array([q.conversation for q in sets[0]])
    if len(asked) != len(sets[0]):
        raise SystemExit(f"{len(asked)} questions in the file, {len(sets[0])} in the cache")

    def grid_ranks(variant: str, tunings: list[RecallTuning]) -> tuple[np.ndarray, np.ndarray]:
        rows = [[ranks_of(q, ordering(q, t, content, facts, text), facts)
                 for q, text in zip(by_variant[variant], asked, strict=True)] for t in tunings]
        arr = np.array(rows, dtype=np.int64)
        return arr[:, :, 0], arr[:, :, 1]

    if args.against_now:
        against_now(base, by_variant, asked, content, facts, cats, conv, args)
        return
    # "Before": the defaults as they stand, only the keyword weight chosen per fold.
    plain = [replace(off, keyword_weight=w) for w in WEIGHTS]
    before_t, before_s = grid_ranks("before", plain)
    before_cv, before_scv, _ = cv(before_t, before_s, conv)
    at = WEIGHTS.index(base.keyword_weight)
    out: dict[str, Any] = {
        "questions": len(asked),
        "before": {"in_sample": per_category(before_t[at], before_s[at], cats),
                   "cv": per_category(before_cv, before_scv, cats)},
        "changes": {},
    }
    show(f"before (the defaults; keyword weight {base.keyword_weight} in sample)",
         out["before"])
    for name, (variant, knob, values) in ({} if args.only_after else CHANGES).items():
        tunings = [replace(t, **({knob: v} if knob else {})) for v in values for t in plain]
        turn, session = grid_ranks(variant, tunings)
        held, sheld, chosen = cv(turn, session, conv)
        objective = ((turn <= 10) + np.where(turn <= 50, 1.0 / turn, 0.0)).mean(axis=1)
        everywhere = int(np.argmax(objective))
        verdict = paired(before_cv, held)
        result = {
            "in_sample": per_category(turn[everywhere], session[everywhere], cats),
            "cv": per_category(held, sheld, cats),
            "chosen_per_fold": [_knob(tunings[i], knob) for i in chosen],
            "chosen_on_all": _knob(tunings[everywhere], knob),
            "paired_cv": verdict,
        }
        out["changes"][name] = result
        show(f"{name}: {verdict['verdict']} (dMRR {verdict['mrr_delta']:+.4f} p "
             f"{verdict['p_mrr']:.3f}; hit@10 +{verdict['hit10_gained']} "
             f"-{verdict['hit10_lost']} p {verdict['p_hit10']:.3f}); chosen on all "
             f"{result['chosen_on_all']}, per fold {result['chosen_per_fold']}", result)
    # "After": the engine's defaults as they are now (the rule of now for time questions,
    # the statement form if it is the default), only the keyword weight chosen per fold.
    now = [replace(base, keyword_weight=w) for w in WEIGHTS]
    view = "statement" if base.dense_query_form == "statement" else "opening"
    after_t, after_s = grid_ranks(view, now)
    after_cv, after_scv, chosen = cv(after_t, after_s, conv)
    verdict = paired(before_cv, after_cv)
    out["after"] = {"in_sample": per_category(after_t[at], after_s[at], cats),
                    "cv": per_category(after_cv, after_scv, cats), "paired_cv": verdict,
                    "chosen_per_fold": [now[i].keyword_weight for i in chosen]}
    show(f"after (the defaults now): {verdict['verdict']} (dMRR {verdict['mrr_delta']:+.4f} "
         f"p {verdict['p_mrr']:.3f}; hit@10 +{verdict['hit10_gained']} "
         f"-{verdict['hit10_lost']} p {verdict['p_hit10']:.3f})", out["after"])
    out["machine"] = machine()
    print(json.dumps({k: v for k, v in out.items() if k != "machine"}))
    write_json(args.json, out)


def against_now(base: RecallTuning, by_variant: dict[str, list[Question]], asked: list[str],
                content: dict[int, str], facts: dict[int, RowFact], cats: np.ndarray,
                conv: np.ndarray, args: argparse.Namespace) -> None:
    """Issue 31's fourth round: every change of NOW_CHANGES against the defaults now."""
    def grid(options: list[tuple[str, RecallTuning]]) -> tuple[np.ndarray, np.ndarray]:
        rows = [[ranks_of(q, ordering(q, t, content, facts, text), facts)
                 for q, text in zip(by_variant["opening" if view == "asked" else view],
                                    asked, strict=True)] for view, t in options]
        arr = np.array(rows, dtype=np.int64)
        return arr[:, :, 0], arr[:, :, 1]

    def options_of(spec: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, RecallTuning]]:
        return [(view, replace(base, keyword_weight=w, **knobs))
                for view, knobs in spec for w in WEIGHTS]

    now = options_of([("asked", {})])
    now_t, now_s = grid(now)
    now_cv, now_scv, _ = cv(now_t, now_s, conv)
    at = WEIGHTS.index(base.keyword_weight)
    out: dict[str, Any] = {"questions": len(asked), "against": "the defaults now",
                           "now": {"in_sample": per_category(now_t[at], now_s[at], cats),
                                   "cv": per_category(now_cv, now_scv, cats)},
                           "changes": {}}
    show(f"now (the defaults; keyword weight {base.keyword_weight} in sample)", out["now"])
    for name, spec in NOW_CHANGES.items():
        if args.only and name not in args.only:
            continue
        options = options_of(spec)
        labels = [f"{view} {knobs} kw {w}" for view, knobs in spec for w in WEIGHTS]
        turn, session = grid(options)
        held, sheld, chosen = cv(turn, session, conv)
        objective = ((turn <= 10) + np.where(turn <= 50, 1.0 / turn, 0.0)).mean(axis=1)
        everywhere = int(np.argmax(objective))
        verdict = paired(now_cv, held)
        result = {"in_sample": per_category(turn[everywhere], session[everywhere], cats),
                  "cv": per_category(held, sheld, cats),
                  "chosen_per_fold": [labels[i] for i in chosen],
                  "chosen_on_all": labels[everywhere], "paired_cv": verdict}
        out["changes"][name] = result
        show(f"{name}: {verdict['verdict']} (dMRR {verdict['mrr_delta']:+.4f} p "
             f"{verdict['p_mrr']:.3f}; hit@10 +{verdict['hit10_gained']} "
             f"-{verdict['hit10_lost']} p {verdict['p_hit10']:.3f}); chosen on all "
             f"{result['chosen_on_all']}, per fold {result['chosen_per_fold']}", result)
    out["machine"] = machine()
    print(json.dumps({k: v for k, v in out.items() if k != "machine"}))
    write_json(args.json, out)


def _knob(t: RecallTuning, knob: str) -> dict[str, Any]:
    return {"keyword_weight": t.keyword_weight, **({knob: getattr(t, knob)} if knob else {})}


def _questions(samples: list[dict[str, Any]]) -> list[str]:
    """The question texts in the order locomo_cv.collect keeps them."""
    from locomo import parse_evidence

    out = []
    for sample in samples:
        dia = {t["dia_id"] for turns in sample["conversation"].values()
               if isinstance(turns, list) for t in turns}
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            if any(e in dia for e in parse_evidence(qa.get("evidence", []))):
                out.append(qa["question"])
    return out


COLUMNS = ["hit@1", "hit@10", "hit@50", "mrr", "s-hit@1", "s-hit@3", "s-hit@5"]


def show(title: str, result: dict[str, Any], emit: Callable[[str], None] = print) -> None:
    emit(title)
    for part in ("in_sample", "cv"):
        rows = [[f"{part} {name}", f["n"], *(f[c] for c in COLUMNS)]
                for name, f in result[part].items()]
        emit(table(["split", "n", *COLUMNS], rows))


if __name__ == "__main__":
    main()
