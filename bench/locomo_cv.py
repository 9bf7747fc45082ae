"""Leave-one-conversation-out cross-validation of recall's fusion constants on LOCOMO.

    python bench/locomo_cv.py PATH/locomo-dev.json [--json bench/results/locomo_cv.json]

Each conversation is ingested once (default model; fact extraction off: it changes
nothing the retrievers see) and, for every question, the retrievers run once
(``Recaller.candidates``). Every tuning of the grid is then scored from those cached
candidates, vectorised over the grid; the figures of the tunings reported are checked
against the engine's own ``fusion.fuse`` / ``fusion.prefer_timed`` on the same
candidates, so the grid scores the code recall runs.

For each conversation in turn, the tuning with the best hit@10 + MRR on the other
conversations is chosen and scored on the held-out one: the "CV" figures. "in-sample"
scores one tuning on every conversation. Pure relevance: no lifecycle scoring (the
adjusters change nothing here: a fresh store, no feedback, no facts).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, cast

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, table, write_json  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402
from aide_memoire.engine.core.kinds import only_adds  # noqa: E402
from aide_memoire.engine.core.text import (  # noqa: E402
    QueryShape,
    addresses_someone,
    content_words,
    named_words,
    names_something,
    states_change,
    states_time,
)
from aide_memoire.engine.recall.fusion import (  # noqa: E402
    DENSE_SCALES,
    KEYWORD_SCALES,
    Candidates,
    RecallTuning,
    dense_scores,
    fuse,
    keyword_coverage,
    keyword_scores,
    prefer_timed,
)
from aide_memoire.engine.recall.recaller import RecallRequest  # noqa: E402
from aide_memoire.engine.recall.stages import (  # noqa: E402
    RowFact,
    lift_sessions,
    prefer_current,
    prefer_latest,
    prefer_named,
    prefer_recent,
    prefer_restated,
)
from aide_memoire.engine.storage.store import RowFilter  # noqa: E402
from locomo import CATEGORIES, ingest, parse_evidence  # noqa: E402

# The grid: every combination is scored (the CV figures are for this grid; the
# engine's defaults are the tuning chosen on all five conversations). Agreement depth
# only matters with a bonus.
# (A first, wider grid - keyword weight 0.2-0.7, speaker boost 0-0.4, agreement bonus
# up to 0.2 at depth 1-10, time boost 0-0.3 - chose nothing outside this one.)
GRID: dict[str, list[Any]] = {
    "keyword_weight": [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7],
    "speaker_boost": [0.15, 0.2, 0.25, 0.3, 0.35],
    "agreement": [(0.0, 3), (0.05, 3), (0.05, 10)],
    "timed_boost": [0.0, 0.1, 0.2, 0.3, 0.4],
    "feedback_weight": [0.0, 0.1, 0.2, 0.3],
    "keyword_scale": list(KEYWORD_SCALES),
    "dense_scale": list(DENSE_SCALES),
    "adaptive_keyword": [0.0, 0.5, 1.0],
}
# The stages after fusion (engine/recall/stages.py), scored through the engine's own code on top
# of the engine's fusion defaults: session weight x recency weight.
STAGES: dict[str, list[float]] = {
    "session_weight": [0.0, 0.05, 0.1],
    "recency_weight": [0.0, 0.1, 0.2],
    "named_weight": [0.0, 0.05, 0.1, 0.2],
    "restated_depth": [0, 3, 5, 10],
    "current_depth": [0, 5, 10],
    "latest_depth": [0, 3, 5],
}
# Retrieval variants (each needs its own pass of the retrievers): feedback rows, words.
FEEDBACK: list[tuple[int, int]] = [(3, 8), (5, 8)]
NOT_FOUND = 10**6
CHUNK = 2000


@dataclass
class Question:
    conversation: int
    category: int
    found: Candidates
    rowids: np.ndarray  # candidates, ascending
    keyword: dict[str, np.ndarray]  # keyword score per scale (0 outside the matches)
    dense: dict[str, np.ndarray]  # dense score per scale (0 outside the scored rows)
    speaker: np.ndarray  # 1.0 where the one named speaker said it
    keyword_rank: np.ndarray
    dense_rank: np.ndarray
    timed: np.ndarray  # the row states a time
    feedback: np.ndarray  # min-max score of the feedback query (0 outside its matches)
    evidence: np.ndarray  # indices into rowids
    query: str = ""  # the question's text (the latest-statement stage reads it)


def at_defaults(defaults: RecallTuning) -> dict[str, list[Any]]:
    """The grid of --weights-only: keyword weight x query-adaptive weight, every other knob
    at the engine's default (a quick check of one knob on a loaded machine)."""
    return GRID | {
        "speaker_boost": [defaults.speaker_boost],
        "agreement": [(defaults.agreement_bonus, defaults.agreement_depth)],
        "timed_boost": [defaults.timed_boost], "feedback_weight": [0.0],
        "keyword_scale": [defaults.keyword_scale], "dense_scale": [defaults.dense_scale],
    }


def tunings(base: RecallTuning, grid: dict[str, list[Any]] | None = None
            ) -> list[RecallTuning]:
    out = []
    for (weight, boost, (bonus, depth), timed, feedback, scale, dense,
         adaptive) in itertools.product(*(grid or GRID).values()):
        out.append(replace(base, keyword_weight=weight, speaker_boost=boost,
                           agreement_bonus=bonus, agreement_depth=depth, timed_boost=timed,
                           feedback_weight=feedback, keyword_scale=scale,
                           dense_scale=dense, adaptive_keyword=adaptive))
    return out


def _ranks(rowids: np.ndarray, scores: dict[int, float]) -> np.ndarray:
    order = sorted(scores, key=lambda r: (-scores[r], r))
    rank = {r: i for i, r in enumerate(order, 1)}
    return np.array([rank.get(int(r), NOT_FOUND) for r in rowids], dtype=np.int64)


def _norm(rowids: np.ndarray, scores: dict[int, float]) -> np.ndarray:
    """Min-max over the scored rows, 0 for the others (as fusion._minmax)."""
    if not scores:
        return np.zeros(len(rowids))
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    return np.array([((scores[r] - low) / span if span > 0 else 1.0) if r in scores else 0.0
                     for r in rowids.tolist()])


def _scaled(rowids: np.ndarray, scores: dict[int, float]) -> np.ndarray:
    return np.array([scores.get(r, 0.0) for r in rowids.tolist()])


def prepare(found: Candidates, conversation: int, category: int, evidence: set[int],
            content: dict[int, str], query: str = "") -> Question:
    rowids = np.array(sorted(found.rows()), dtype=np.int64)
    kw = found.keyword
    return Question(
        conversation=conversation,
        category=category,
        found=found,
        rowids=rowids,
        keyword={scale: _scaled(rowids, keyword_scores(found, scale))
                 for scale in KEYWORD_SCALES},
        dense={scale: _scaled(rowids, dense_scores(found, scale)) for scale in DENSE_SCALES},
        speaker=np.array([1.0 if r in found.speaker_rows else 0.0 for r in rowids.tolist()]),
        keyword_rank=_ranks(rowids, kw),
        dense_rank=_ranks(rowids, found.dense),
        timed=np.array([states_time(content.get(r, "")) for r in rowids.tolist()]),
        feedback=_norm(rowids, found.feedback),
        evidence=np.flatnonzero(np.isin(rowids, list(evidence))),
        query=query,
    )


def grid_ranks(q: Question, grid: list[RecallTuning]) -> np.ndarray:
    """Rank of the first evidence row under each tuning (NOT_FOUND if not a candidate)."""
    if not len(q.evidence):
        return np.full(len(grid), NOT_FOUND)
    weight = np.array([t.identifier_keyword_weight if q.found.shape.identifier
                       else t.keyword_weight * (min(1.0, keyword_coverage(
                           q.found, t.coverage_basis) / t.adaptive_keyword)
                                                if t.adaptive_keyword > 0 else 1.0)
                       for t in grid])[:, None]
    if not q.found.dense_live:
        weight = np.ones_like(weight)
    boost = np.array([t.speaker_boost for t in grid])[:, None]
    bonus = np.array([t.agreement_bonus for t in grid])[:, None]
    depth = np.array([t.agreement_depth for t in grid])[:, None]
    both = (q.keyword_rank[None, :] <= depth) & (q.dense_rank[None, :] <= depth)
    if not (q.found.keyword and q.found.dense):
        both = np.zeros_like(both)
    feedback = np.array([t.feedback_weight for t in grid])[:, None]
    keyword = np.stack([q.keyword[t.keyword_scale] for t in grid])
    dense = np.stack([q.dense[t.dense_scale] for t in grid])
    fused = (weight * keyword + (1 - weight) * dense + feedback * q.feedback[None, :]
             + boost * q.speaker[None, :] + bonus * both)
    if q.found.shape.temporal:
        timed = np.array([t.timed_boost for t in grid])[:, None]
        cut = grid[0].timed_depth
        # The best `cut` by (-score, rowid): rowids ascend, so a stable argsort of -score.
        order = np.argsort(-fused, axis=1, kind="stable")[:, :cut]
        top = np.zeros_like(fused, dtype=bool)
        np.put_along_axis(top, order, True, axis=1)
        fused = fused + timed * (top & q.timed[None, :])
    best = np.full(len(grid), NOT_FOUND)
    index = np.arange(len(q.rowids))
    for j in q.evidence.tolist():
        beats = (fused > fused[:, j : j + 1]) | ((fused == fused[:, j : j + 1]) & (index < j))
        best = np.minimum(best, beats.sum(axis=1) + 1)
    return best


def engine_rank(q: Question, tuning: RecallTuning, content: dict[int, str],
                facts: dict[int, RowFact] | None = None) -> int:
    """The same rank through the engine's own fusion code (and its stages after fusion,
    given the rows' sessions and times)."""
    fused = prefer_timed(fuse(q.found, tuning), q.found.shape, tuning,
                         lambda rows: {r: content.get(r, "") for r in rows})
    if facts is not None:
        def known(rows: Any) -> dict[int, RowFact]:
            return {r: facts[r] for r in rows if r in facts}
        fused = lift_sessions(fused, known, tuning)
        fused = prefer_named(fused, q.found.shape, known, tuning)
        fused = prefer_recent(fused, q.found.shape, known, tuning)
        fused = prefer_restated(fused, q.found.shape, q.found.speaker_rows, known, tuning)
        fused = prefer_current(fused, q.found.shape, q.found.speaker_rows, known, tuning)
        fused = prefer_latest(fused, q.found.shape, q.query, q.found.speaker_rows, known,
                              tuning)
    order = sorted(fused, key=lambda r: (-fused[r], r))
    wanted = {int(q.rowids[j]) for j in q.evidence}
    return next((i for i, r in enumerate(order, 1) if r in wanted), NOT_FOUND)


def metrics(ranks: np.ndarray) -> dict[str, float]:
    return {
        "n": int(len(ranks)),
        "hit@1": float(np.mean(ranks <= 1)),
        "hit@10": float(np.mean(ranks <= 10)),
        "hit@50": float(np.mean(ranks <= 50)),
        "mrr": float(np.mean(np.where(ranks <= 50, 1.0 / ranks, 0.0))),
    }


def by_category(ranks: np.ndarray, questions: list[Question]) -> dict[str, dict[str, float]]:
    cats = np.array([q.category for q in questions])
    out = {"overall": metrics(ranks)}
    for number, name in CATEGORIES.items():
        out[name] = metrics(ranks[cats == number])
    return out


def collect(
    path: Path, home: Path, variants: list[RecallTuning]
) -> tuple[list[list[Question]], dict[int, str], dict[int, RowFact]]:
    """Questions with their candidates, once per retrieval variant; every row's text, and
    its session and time (what the stages after fusion read)."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    settings = Settings(home=home, extract_facts=False, lifecycle_scoring=False)
    questions: list[list[Question]] = [[] for _ in variants]
    content: dict[int, str] = {}
    facts: dict[int, RowFact] = {}
    with Memory(settings=settings) as memory:
        assert memory.internals.embedder.wait(), memory.internals.embedder.error
        recaller = memory.internals.recaller
        base = recaller.tuning
        conn = memory.internals.db.conn()
        for number, sample in enumerate(samples):
            namespace, _count, by_id = ingest(memory, sample)
            rows = {str(i): (int(r), str(c)) for r, i, c in conn.execute(
                "SELECT rowid, id, content FROM memories WHERE namespace = ?", (namespace,))}
            rowid_of_dia = {by_id[i]: rows[i][0] for i in by_id}
            content.update(rows.values())
            for record in memory.internals.recaller.store.records(
                    conn, [r for r, _ in rows.values()]
                                                        ).values():
                rowid = rows[record.id][0]
                at = record.observed_at or record.created_at
                facts[rowid] = RowFact(
                    session=f"{namespace}\x00{record.session_id}" if record.session_id
                    else None, at=at.timestamp(), speaker=record.speaker)
            for qa in sample["qa"]:
                category = qa.get("category")
                if category not in CATEGORIES:
                    continue
                evidence = {rowid_of_dia[e] for e in parse_evidence(qa.get("evidence", []))
                            if e in rowid_of_dia}
                if not evidence:
                    continue
                request = RecallRequest(query=qa["question"],
                                        where=RowFilter(namespaces=[namespace]), limit=50,
                                        pure=True)
                for out, variant in zip(questions, variants, strict=True):
                    recaller.tuning = variant
                    with memory.internals.db.read() as read:
                        found = recaller.candidates(read, request)
                    out.append(prepare(found, number, category, evidence, content, qa["question"]))
                recaller.tuning = base
    return questions, content, facts


def cross_validate(
    questions: list[Question], grid: list[RecallTuning], ranks: np.ndarray
) -> dict[str, Any]:
    """``ranks``: (tunings, questions) ranks of the first evidence row."""
    conv = np.array([q.conversation for q in questions])
    objective = (ranks <= 10).astype(float) + np.where(ranks <= 50, 1.0 / ranks, 0.0)
    held_out = np.zeros(len(questions), dtype=np.int64)
    chosen = []
    chosen_index = []
    for fold in sorted(set(conv.tolist())):
        train = conv != fold
        best = int(np.argmax(objective[:, train].mean(axis=1)))  # first best: grid order
        held_out[~train] = ranks[best, ~train]
        chosen.append({"held_out": fold, **_knobs(grid[best])})
        chosen_index.append(best)
    overall = int(np.argmax(objective.mean(axis=1)))
    return {"cv": held_out, "chosen": chosen, "chosen_index": chosen_index,
            "all_data_best": overall}


def _knobs(t: RecallTuning) -> dict[str, Any]:
    return {k: v for k, v in asdict(t).items()
            if k in ("keyword_weight", "speaker_boost", "agreement_bonus", "agreement_depth",
                     "timed_boost", "feedback_docs", "feedback_terms", "feedback_weight",
                     "keyword_scale", "dense_scale", "adaptive_keyword")}


def stage_report(questions: list[Question], fusion: RecallTuning, content: dict[int, str],
                 facts: dict[int, RowFact], only: list[str] | None = None) -> dict[str, Any]:
    """The stages after fusion on the engine's fusion defaults: in sample and CV (each
    fold choosing its weights on the other conversations), and each stage left out.
    ``only``: score just these stages (the others off), a grid a loaded machine finishes."""
    stages = {k: v for k, v in STAGES.items() if not only or k in only}
    names = list(stages)
    grid = [replace(fusion, **cast("dict[str, Any]", dict(zip(names, values, strict=True))))
            for values in itertools.product(*stages.values())]
    ranks = np.stack([np.array([engine_rank(q, t, content, facts) for q in questions])
                      for t in grid])

    def weights(t: RecallTuning) -> dict[str, float]:
        return {n: float(getattr(t, n)) for n in names}

    off = next(i for i, t in enumerate(grid) if not any(weights(t).values()))
    cv = cross_validate(questions, grid, ranks)
    figures = {"off (fusion defaults alone)": by_category(ranks[off], questions),
               "CV over every stage": by_category(cv["cv"], questions)}
    for name in names:
        alone = [i for i, t in enumerate(grid)
                 if all(v == 0 for n, v in weights(t).items() if n != name)]
        without = [i for i, t in enumerate(grid) if weights(t)[name] == 0]
        for label, keep in ((f"{name} alone (CV)", alone), (f"without {name} (CV)", without)):
            part = cross_validate(questions, [grid[i] for i in keep], ranks[keep])
            figures[label] = by_category(part["cv"], questions)
    in_sample = {json.dumps(weights(t)): by_category(ranks[i], questions)
                 for i, t in enumerate(grid)}
    return {"figures": figures, "in_sample": in_sample,
            "chosen_per_fold": [{"held_out": c["held_out"], **weights(grid[i])}
                                for c, i in zip(cv["chosen"], cv["chosen_index"],
                                                strict=True)],
            "all_data_best": weights(grid[cv["all_data_best"]])}


def _knob_values(pairs: list[str]) -> dict[str, Any]:
    """'names_in_dense_query=false', 'restated_depth=5' -> typed values for RecallTuning."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, _, text = pair.partition("=")
        current = getattr(RecallTuning(), key.strip())
        value = text.strip()
        out[key.strip()] = (value.lower() in ("1", "true", "yes") if isinstance(current, bool)
                            else type(current)(value))
    return out


def report(title: str, figures: dict[str, dict[str, float]]) -> str:
    cols = ["hit@1", "hit@10", "hit@50", "mrr"]
    rows = [[name, f["n"], *(f[c] for c in cols)] for name, f in figures.items()]
    return f"{title}\n" + table(["split", "n", *cols], rows)


# --cache: plain JSON (numbers, strings, lists), never pickled engine objects, so a
# module move or a renamed class does not break it; a cache of another version, or whose
# fields the engine's classes no longer take, is rebuilt (said on stderr).
CACHE_FORMAT, CACHE_VERSION = "aide-memoire/locomo-cv-cache", 3
Cached = tuple[list[list[Question]], dict[int, str], dict[int, RowFact]]


def _pairs(scores: dict[int, float]) -> list[list[float]]:
    return [[int(r), float(v)] for r, v in sorted(scores.items())]


def _plain(value: Any) -> Any:
    """A numpy scalar (a cosine bound, a row id) as the Python number it holds."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not plain data for the cache")


def dump_cache(path: Path, sets: list[list[Question]], content: dict[int, str],
               facts: dict[int, RowFact]) -> None:
    def found(c: Candidates) -> dict[str, Any]:
        return {"keyword": _pairs(c.keyword), "dense": _pairs(c.dense),
                "feedback": _pairs(c.feedback), "dense_low": c.dense_low,
                "dense_high": c.dense_high, "dense_live": c.dense_live,
                "speaker_rows": sorted(c.speaker_rows), "shape": asdict(c.shape),
                "keyword_ideal": c.keyword_ideal, "keyword_held": c.keyword_held}

    path.write_text(json.dumps({
        "format": CACHE_FORMAT, "version": CACHE_VERSION,
        "sets": [[{"conversation": q.conversation, "category": q.category,
                   "evidence": q.rowids[q.evidence].tolist(), "found": found(q.found),
                   "query": q.query}
                  for q in questions] for questions in sets],
        "content": [[r, text] for r, text in sorted(content.items())],
        # What the stages read of a row's text (names, change words) is read again on
        # load: only what the text cannot tell is kept.
        "facts": [[r, {"session": f.session, "at": f.at, "speaker": f.speaker}]
                  for r, f in sorted(facts.items())],
    }, default=_plain), encoding="utf-8")


def load_cache(path: Path, variants: int) -> Cached | None:
    """The cached candidates, prepared again (the scales scored may have changed)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or (data.get("format"), data.get("version")) != (
            CACHE_FORMAT, CACHE_VERSION) or len(data["sets"]) < variants:
        print(f"{path}: not a {CACHE_FORMAT} v{CACHE_VERSION} cache of {variants} "
              "variants: collecting again", file=sys.stderr)
        return None
    content = {int(r): str(text) for r, text in data["content"]}
    try:
        facts = {int(r): RowFact(**f) for r, f in data["facts"]}
        sets = [[prepare(Candidates(
            keyword={int(r): v for r, v in q["found"]["keyword"]},
            dense={int(r): v for r, v in q["found"]["dense"]},
            feedback={int(r): v for r, v in q["found"]["feedback"]},
            dense_low=q["found"]["dense_low"], dense_high=q["found"]["dense_high"],
            dense_live=q["found"]["dense_live"],
            speaker_rows=set(q["found"]["speaker_rows"]),
            shape=QueryShape(**q["found"]["shape"]),
            keyword_ideal=q["found"]["keyword_ideal"],
            keyword_held=q["found"]["keyword_held"]),
            q["conversation"], q["category"], set(q["evidence"]), content,
            str(q.get("query", "")))
            for q in questions] for questions in data["sets"][:variants]]
    except TypeError as exc:  # a field the engine's classes no longer take
        print(f"{path}: written for other engine classes ({exc}): collecting again",
              file=sys.stderr)
        return None
    return sets, content, facts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, help="a LOCOMO-format JSON file")
    parser.add_argument("--json", type=Path, default=None, help="also write the result here")
    parser.add_argument("--without-feedback", action="store_true",
                        help="score no keyword-feedback variant (the engine's default: off)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep the retrieved candidates in this file and reuse them "
                        "(one file per --set: the candidates depend on it)")
    parser.add_argument("--weights-only", action="store_true",
                        help="score only keyword weight x query-adaptive weight (the other "
                        "knobs at the defaults) and skip the stages after fusion")
    parser.add_argument("--with-stages", action="store_true",
                        help="score the stages after fusion even with --weights-only")
    parser.add_argument("--stage", action="append", default=[], metavar="NAME",
                        help="score only these stages after fusion (e.g. current_depth), "
                        "the others off")
    parser.add_argument("--set", action="append", default=[], metavar="KNOB=VALUE",
                        help="change one of the engine's defaults for the whole run "
                        "(retrieval included), e.g. names_in_dense_query=false")
    args = parser.parse_args()
    defaults = replace(RecallTuning(), **_knob_values(args.set))
    knobs = at_defaults(defaults) if args.weights_only else GRID
    feedback = [] if args.without_feedback else FEEDBACK
    # Retrieved with a calibrated scale so that the ideal keyword score is computed
    # (the candidates themselves do not depend on the scale).
    collect_as = replace(defaults, keyword_scale="ideal", session_weight=0.0,
                         recency_weight=0.0, named_weight=0.0, restated_depth=0,
                         current_depth=0, latest_depth=0)
    variants: list[RecallTuning] = [replace(collect_as, feedback_docs=0)] + [
        replace(collect_as, feedback_docs=docs, feedback_terms=terms)
        for docs, terms in feedback
    ]
    cached = None
    if args.cache is not None and args.cache.exists():
        cached = load_cache(args.cache, len(variants))
    if cached is not None:
        sets, content, facts = cached
    else:
        with tempfile.TemporaryDirectory() as tmp:
            sets, content, facts = collect(args.path, Path(tmp), variants)
        if args.cache is not None:
            dump_cache(args.cache, sets, content, facts)
    # What a row names is read from its text here, so a cache need not hold it.
    facts = {r: replace(f, named=names_something(text), addresses=addresses_someone(text),
                        changes=states_change(text), names=named_words(text),
                        words=content_words(text), adds=only_adds(text),
                        said=" ".join(text.casefold().split()))
             for r, f in facts.items() if (text := content.get(r, "")) is not None}
    base = replace(defaults, session_weight=0.0, recency_weight=0.0, named_weight=0.0,
                   restated_depth=0, current_depth=0, latest_depth=0)
    before = replace(defaults, keyword_weight=0.4, speaker_boost=0.2, timed_boost=0.0,
                     feedback_docs=0, feedback_weight=0.0, agreement_bonus=0.0,
                     keyword_scale="minmax", dense_scale="namespace",
                     adaptive_keyword=0.0)
    # Variant 0 (no feedback rows) scores no feedback weight; the others, only with one.
    grid: list[RecallTuning] = []
    parts = []
    owner: list[int] = []
    for number, (variant, questions) in enumerate(zip(variants, sets, strict=True)):
        part = [t for t in tunings(variant, knobs)
                if (t.feedback_weight > 0) == (number > 0)]
        grid += part
        owner += [number] * len(part)
        # In chunks of tunings: one question's scores for the whole grid would not fit.
        parts.append(np.stack([np.concatenate([grid_ranks(q, part[i:i + CHUNK])
                                               for i in range(0, len(part), CHUNK)])
                               for q in questions], axis=1))
        print(f"variant {number}: {len(part)} tunings scored", file=sys.stderr)
    ranks = np.concatenate(parts, axis=0)
    questions = sets[0]
    # Today's knobs only (keyword weight, speaker boost), the new ones off: "before".
    old = [i for i, t in enumerate(grid)
           if t.agreement_bonus == 0 and t.timed_boost == 0 and owner[i] == 0
           and t.keyword_scale == "minmax" and t.dense_scale == "namespace"]
    if args.weights_only:  # the fixed keyword weight stands for "before" here
        old = [i for i, t in enumerate(grid) if t.adaptive_keyword == 0]
    old_cv = cross_validate(questions, [grid[i] for i in old], ranks[old])
    result = cross_validate(questions, grid, ranks)
    # Each new idea left out in turn (CV over the rest of the grid): what it adds.
    without = {
        "no time boost": [i for i, t in enumerate(grid) if t.timed_boost == 0],
        "no feedback": [i for i, t in enumerate(grid) if owner[i] == 0],
        "no agreement bonus": [i for i, t in enumerate(grid) if t.agreement_bonus == 0],
        "no query-adaptive keyword weight": [i for i, t in enumerate(grid)
                                             if t.adaptive_keyword == 0],
        "query-adaptive keyword weight only": [i for i, t in enumerate(grid)
                                               if t.adaptive_keyword > 0],
        "min-max keyword scale only": [i for i, t in enumerate(grid)
                                       if t.keyword_scale == "minmax"],
        "ideal keyword scale only": [i for i, t in enumerate(grid)
                                     if t.keyword_scale == "ideal"],
        "scaled keyword scale only": [i for i, t in enumerate(grid)
                                      if t.keyword_scale == "scaled"],
        "dense scaled by the namespace only": [i for i, t in enumerate(grid)
                                               if t.dense_scale == "namespace"],
        "dense cosine only": [i for i, t in enumerate(grid) if t.dense_scale == "cosine"],
        # The knobs the defaults use (no agreement bonus, dense by namespace), with and
        # without the choice of keyword scale: the rule for adopting the calibration.
        "defaults' knobs, min-max keyword": [
            i for i, t in enumerate(grid) if t.agreement_bonus == 0 and owner[i] == 0
            and t.dense_scale == "namespace" and t.keyword_scale == "minmax"],
        "defaults' knobs and the keyword scale": [
            i for i, t in enumerate(grid) if t.agreement_bonus == 0 and owner[i] == 0
            and t.dense_scale == "namespace"],
    }
    if not feedback:
        del without["no feedback"]
    ablations = {
        name: by_category(cross_validate(questions, [grid[i] for i in keep], ranks[keep])["cv"],
                          questions)
        for name, keep in without.items() if keep
    }
    default = next(i for i, t in enumerate(grid) if _knobs(t) == _knobs(base))
    earlier = next((i for i, t in enumerate(grid) if _knobs(t) == _knobs(before)), default)
    checked = {default, earlier, result["all_data_best"], *result["chosen_index"]}
    for index in checked:
        engine = np.array([engine_rank(q, grid[index], content) for q in sets[owner[index]]])
        if not np.array_equal(np.minimum(engine, NOT_FOUND), ranks[index]):
            raise SystemExit(f"grid and engine disagree for {_knobs(grid[index])}")
    stages = ({"figures": {}, "chosen_per_fold": []}
              if args.weights_only and not args.with_stages else
              stage_report(questions, replace(defaults, feedback_docs=0), content, facts,
                           args.stage))
    out = {
        "questions": len(questions),
        "identifier_questions": sum(q.found.shape.identifier for q in questions),
        "temporal_questions": sum(q.found.shape.temporal for q in questions),
        "present_questions": sum(q.found.shape.present for q in questions),
        "tunings": len(grid),
        "defaults": _knobs(base),
        "set": args.set,
        "in_sample_defaults": by_category(ranks[default], questions),
        "in_sample_before": by_category(ranks[earlier], questions),
        "cv_old_knobs": by_category(old_cv["cv"], questions),
        "chosen_per_fold_old_knobs": old_cv["chosen"],
        "cv": by_category(result["cv"], questions),
        "chosen_per_fold": result["chosen"],
        "cv_without": ablations,
        "best_on_all_data": _knobs(grid[result["all_data_best"]]),
        "in_sample_best": by_category(ranks[result["all_data_best"]], questions),
        "stages": stages,
        "machine": machine(),
    }
    print(report("in-sample, the constants before (keyword 0.4, speaker 0.2, rest off)",
                 out["in_sample_before"]))
    print(report(f"in-sample, the engine's constants {out['defaults']}",
                 out["in_sample_defaults"]))
    print(report("leave-one-conversation-out, today's knobs only", out["cv_old_knobs"]))
    for fold in out["chosen_per_fold_old_knobs"]:
        print("chosen", fold)
    print(report("leave-one-conversation-out (tuned on 4, scored on the 5th)", out["cv"]))
    for fold in out["chosen_per_fold"]:
        print("chosen", fold)
    for name, figures in ablations.items():
        print(report(f"leave-one-conversation-out, {name}", figures))
    print(report(f"in-sample, best on all data {out['best_on_all_data']}",
                 out["in_sample_best"]))
    for name, figures in stages["figures"].items():
        print(report(f"stages after fusion, {name}", figures))
    for fold in stages["chosen_per_fold"]:
        print("stages chosen", fold)
    print(json.dumps({k: v for k, v in out.items() if k != "machine"}))
    write_json(args.json, out)


if __name__ == "__main__":
    main()
