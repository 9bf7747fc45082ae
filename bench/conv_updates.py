"""Knowledge updates said in conversation: the newest statement first "now", the old one
``as_of`` a day between the sessions, controls (series that only add) left unlinked.

    python bench/conv_updates.py [tests/facts/conversational_updates.json]
        [--tunings 'recency_weight=0;default;turns.cue_z=1.5'] [--json OUT.json]

Each scenario (bench/conv_updates_gen*.py) gets its own namespace: its sessions stored with
``store_conversation`` at their dates, then its question recalled now and as of the day
between. Prints top-1 counts per split and per class, and the links made (a turn
``superseded_by`` another) for scenarios and controls. The engine's defaults, or each
tuning listed (``--tunings 'recency_weight=0,named_weight=0'``: those stages off;
``turns.cue_z=1.5``: a TurnTuning constant of the write path); the weights and constants
are chosen on the "tune" half only.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, table, write_json  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402
from aide_memoire.engine.facts.turns import TurnTuning  # noqa: E402
from aide_memoire.engine.recall.fusion import RecallTuning  # noqa: E402
from aide_memoire.engine.services import facts as facts_service  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "tests" / "facts" / "conversational_updates.json"


def store(memory: Memory, item: dict[str, Any], namespace: str) -> list[list[str]]:
    """The scenario's sessions in ``namespace``; the ids of every turn, by session."""
    ids: list[list[str]] = []
    for number, session in enumerate(item["sessions"]):
        batch = [{"speaker": t["speaker"], "content": t["text"]} for t in session["turns"]]
        ids.append(memory.store_conversation(
            batch, namespace=namespace, session_id=f"session_{number + 1}",
            observed_at=session["at"]))
    return ids


def parse_tunings(text: str) -> list[dict[str, float]]:
    """'recency_weight=0.2,named_weight=0.1;recency_weight=0' -> one dict per tuning
    ('default': the engine's own, an empty dict); a whole number is an int (a depth)."""
    out: list[dict[str, float]] = []
    for part in text.split(";"):
        part = part.strip()
        out.append({} if part in ("", "default") else
                   {k.strip(): _number(v) for k, v in (x.split("=") for x in part.split(","))})
    return out


def _number(text: str) -> float:
    text = text.strip()
    return int(text) if text.lstrip("-").isdigit() else float(text)


def run(path: Path, home: Path, *, weights: list[dict[str, float]], mode: str
        ) -> list[dict[str, Any]]:
    """Every scenario stored afresh for each tuning (changes to the engine's defaults),
    then recalled; one summary per tuning. A fresh store each time: a recall records
    access, and lifecycle scoring would carry one tuning's hits into the next."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rows: list[list[dict[str, Any]]] = [[] for _ in weights]
    default = RecallTuning()
    for number, (out, weight) in enumerate(zip(rows, weights, strict=True)):
        settings = Settings(home=home / str(number), embedding_model="none"
                            if mode == "bm25" else Settings().embedding_model)
        weight, links = _parts(weight)
        # The write path's turn-link constants ("turns.cue_z=1.5"): the facts service
        # builds its TurnTuning when the store opens.
        vars(facts_service)["TurnTuning"] = partial(TurnTuning, **cast(dict[str, Any], links))
        with Memory(settings=settings) as memory:
            memory.internals.embedder.wait()
            default = memory.internals.recaller.tuning
            memory.internals.recaller.tuning = replace(default, **weight)  # type: ignore[arg-type]
            stored = []
            for index, item in enumerate(data["scenarios"] + data["controls"]):
                namespace = f"convupd:{index}"
                ids = store(memory, item, namespace)
                stored.append((item, namespace, ids[item["old_turn"][0]][item["old_turn"][1]],
                               ids[item["new_turn"][0]][item["new_turn"][1]]))
            for item, namespace, old, new in stored:
                now = memory.recall(item["query"], namespace=namespace, limit=5)
                then = memory.recall(item["query"], namespace=namespace, limit=5,
                                     as_of=item["as_of"])
                # A question in the past tense ("Where did Ana work before?", the third
                # set): the old statement answers it, whatever holds now.
                past = (memory.recall(item["past_query"], namespace=namespace, limit=5)
                        if item.get("past_query") else [])
                linked = any(m.superseded_by for m in memory.search(
                    namespace=namespace, limit=100, include_superseded=True))
                out.append({
                    "id": item["id"], "cls": item["cls"], "split": item["split"],
                    "control": item["cls"].startswith("control"),
                    "now": bool(now) and now[0].id == new,
                    "as_of": bool(then) and then[0].id == old,
                    "both_top2": {old, new} <= {h.id for h in now[:2]},
                    "past": bool(past) and past[0].id == old,
                    "past_asked": bool(item.get("past_query")),
                    "linked": linked,
                })
    stages = ("recency_weight", "named_weight", "addressed_weight", "session_weight",
              "adaptive_keyword", "restated_depth", "current_depth", "latest_depth", "latest_z",
              "names_in_dense_query")
    out = []
    for r, w in zip(rows, weights, strict=True):
        recall, links = _parts(w)
        tuned = replace(default, **recall)  # type: ignore[arg-type]
        out.append(summarise(r, {**{k: getattr(tuned, k) for k in stages},
                                 **{f"turns.{k}": v for k, v in
                                    asdict(TurnTuning(**cast(dict[str, Any], links))).items()}},
                             mode))
    return out


def _parts(weight: dict[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    """A tuning's RecallTuning changes, and its TurnTuning ones (``turns.`` keys)."""
    return ({k: v for k, v in weight.items() if not k.startswith("turns.")},
            {k.removeprefix("turns."): v for k, v in weight.items() if k.startswith("turns.")})


def summarise(rows: list[dict[str, Any]], tuning: dict[str, Any], mode: str
              ) -> dict[str, Any]:
    out: dict[str, Any] = {"tuning": tuning, "mode": mode, "splits": {},
                           "classes": {}, "rows": rows, "machine": machine()}
    for split in ("tune", "held-out"):
        part = [r for r in rows if r["split"] == split and not r["control"]]
        ctrl = [r for r in rows if r["split"] == split and r["control"]]
        out["splits"][split] = {
            "n": len(part), "now": sum(r["now"] for r in part),
            "as_of": sum(r["as_of"] for r in part), "linked": sum(r["linked"] for r in part),
            "controls": len(ctrl), "controls_linked": sum(r["linked"] for r in ctrl),
            "controls_both_top2": sum(r["both_top2"] for r in ctrl),
            "past_asked": sum(r["past_asked"] for r in part),
            "past": sum(r["past"] for r in part),
            "controls_past": sum(r["past"] for r in ctrl),
        }
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if not r["control"]:
            groups[r["cls"].split(":")[0]].append(r)
            groups["phrasing:" + r["cls"].split(":")[1]].append(r)
    out["classes"] = {k: {"n": len(v), "now": sum(r["now"] for r in v),
                          "as_of": sum(r["as_of"] for r in v)} for k, v in sorted(groups.items())}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, nargs="?", default=DATA)
    parser.add_argument("--tunings", default="default",
                        help="tunings to score, ';'-separated, each a ','-separated list of "
                        "RecallTuning changes (e.g. 'recency_weight=0,named_weight=0;"
                        "default')")
    parser.add_argument("--mode", choices=["hybrid", "bm25"], default="hybrid")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    weights = parse_tunings(args.tunings)
    with tempfile.TemporaryDirectory() as tmp:
        results = run(args.path, Path(tmp), weights=weights, mode=args.mode)
    for result in results:
        print(f"conversational updates ({result['mode']}, {result['tuning']})")
        print(table(["split", "n", "now", "as_of", "linked", "past", "controls", "ctrl linked",
                     "ctrl both top-2", "ctrl past"],
                    [[s, f["n"], f["now"], f["as_of"], f["linked"],
                      f"{f['past']}/{f['past_asked']}", f["controls"],
                      f["controls_linked"], f["controls_both_top2"], f["controls_past"]]
                     for s, f in result["splits"].items()]))
        print(table(["class (both halves)", "n", "now", "as_of"],
                    [[k, v["n"], v["now"], v["as_of"]] for k, v in result["classes"].items()]))
        print(json.dumps({k: v for k, v in result.items() if k not in ("rows", "machine")}))
    write_json(args.json, results[0] if len(results) == 1 else results)


if __name__ == "__main__":
    main()
