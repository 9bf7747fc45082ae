"""The general supersession path on text nobody tuned the rules for.

Scenarios come from knowledge_updates_general.json (written from classes before any
tuning) and are split into a tuning half and a test half by a fixed hash of their text;
the weights in ``UpdateTuning`` were chosen on the tuning half only. Every scenario and
control of a run shares ONE namespace, so they are distractors for each other. "now":
recall with no date puts the current value's memory first; "as_of": recall as of a date
before the change puts the old value's memory first. knowledge_updates_fresh.json is a
second held-out set (see its "about"). Figures are in docs/facts.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from aide_memoire import Memory

from .conftest import facts_settings

HERE = Path(__file__).parent
OLD_AT = "2024-01-15T10:00:00Z"
NEW_AT = "2024-06-15T10:00:00Z"
THEN = "2024-03-01T00:00:00Z"
NAMESPACE = "ku-general"


def half(s: dict[str, Any]) -> str:
    digest = hashlib.sha256((s["old"] + "\n" + s["new"]).encode()).digest()
    return "tune" if digest[0] % 2 == 0 else "test"


def _load(name: str) -> list[dict[str, Any]]:
    data = json.loads((HERE / name).read_text(encoding="utf-8"))
    return [*data["scenarios"], *data["controls"]]


GENERAL = _load("knowledge_updates_general.json")
FRESH = _load("knowledge_updates_fresh.json")
# A third held-out set (other domains and phrasing classes), committed before the second
# round of tuning and measured once after it; and the supplementary tuning set.
HELDOUT3 = _load("knowledge_updates_heldout3.json")
TUNING2 = _load("knowledge_updates_tuning2.json")
# A fourth, from aspect x phrasing classes, committed before the third round changed any
# rule and measured only before and after it.
HELDOUT4 = _load("knowledge_updates_heldout4.json")
# Tuning material for long multi-clause memories (the main-clause reading), written after
# the fourth held-out set.
TUNING3 = _load("knowledge_updates_tuning3.json")


@dataclass
class Outcome:
    now: int = 0
    as_of: int = 0
    linked: int = 0
    total: int = 0

    def share(self, field: str) -> float:
        return float(getattr(self, field)) / self.total


# What one scenario or control gave: (its old text, now top-1 right, as_of top-1 right,
# the older linked to the newer, the smaller of the two recalls' gaps between their first
# and second scores). The backends must give the same list.
Detail = tuple[str, bool, bool, bool, float]


def _run(memory: Memory, items: list[dict[str, Any]], namespace: str,
         detail: list[Detail] | None = None) -> dict[str, Outcome]:
    ids: dict[tuple[int, str], str] = {}
    for phase, at in (("old", OLD_AT), ("new", NEW_AT)):
        for i, s in enumerate(items):
            if s.get("speaker"):
                (ids[(i, phase)],) = memory.store_conversation(
                    [{"speaker": s["speaker"], "content": s[phase]}], namespace=namespace,
                    observed_at=at, session_id=f"{phase}-{i}",
                )
            else:
                ids[(i, phase)] = memory.store(s[phase], namespace=namespace, observed_at=at)
    out: dict[str, Outcome] = {}
    for i, s in enumerate(items):
        control = s["cls"] == "control"
        now = memory.recall(s["query"], namespace=namespace, limit=5)
        then = memory.recall(s["query"], namespace=namespace, limit=5, as_of=THEN)
        old = memory.get(ids[(i, "old")], namespace=namespace)
        o = out.setdefault(f"{half(s)}:{'control' if control else 'change'}", Outcome())
        now_ok = bool(now) and now[0].id == ids[(i, "old" if control else "new")]
        as_of_ok = bool(then) and then[0].id == ids[(i, "old")]
        linked = old.superseded_by == ids[(i, "new")]
        o.now += now_ok
        o.as_of += as_of_ok
        o.linked += linked
        o.total += 1
        if detail is not None:
            detail.append((s["old"], now_ok, as_of_ok, linked, min(_gap(now), _gap(then))))
    return out


def _gap(hits: list[Any]) -> float:
    return hits[0].score - hits[1].score if len(hits) > 1 else float("inf")


@contextlib.contextmanager
def _memory(request: pytest.FixtureRequest, backend: str, home: Path,
            dense: bool) -> Iterator[Memory]:
    extra: dict[str, object] = {} if dense else {"embedding_model": "none"}
    with facts_settings(request, backend, home, **extra) as settings, \
            Memory(settings=settings) as memory:
        yield memory


Run = tuple[dict[str, dict[str, Outcome]], list[Detail]]
# (corpus, mode, backend) -> the run's outcomes by corpus and its details: each run once
# a session, so that the comparison of the backends reads the runs the floors checked.
_RUNS: dict[tuple[str, str, str], Run] = {}
CORPORA = {"general": ((GENERAL, NAMESPACE), (FRESH, "ku-fresh")),
           "heldout3": ((HELDOUT3, "ku-heldout3"),), "heldout4": ((HELDOUT4, "ku-heldout4"),)}


def _outcomes(request: pytest.FixtureRequest, factory: pytest.TempPathFactory, corpus: str,
              mode: str, backend: str) -> Run:
    key = (corpus, mode, backend)
    if key not in _RUNS:
        detail: list[Detail] = []
        with _memory(request, backend, factory.mktemp(f"ku-{corpus}-{mode}-{backend}"),
                     mode == "hybrid") as memory:
            got = {ns: _run(memory, items, ns, detail) for items, ns in CORPORA[corpus]}
        _RUNS[key] = (got, detail)
    return _RUNS[key]


@pytest.fixture(scope="module", params=["hybrid", "keyword"])
def outcomes(
    request: pytest.FixtureRequest, facts_backend: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, dict[str, Outcome], dict[str, Outcome]]:
    mode = str(request.param)
    got, _ = _outcomes(request, tmp_path_factory, "general", mode, facts_backend)
    return mode, got[NAMESPACE], got["ku-fresh"]


HELD_OUT = ("heldout3", "heldout4")


@pytest.fixture(scope="module", params=[(w, m) for w in HELD_OUT for m in ("hybrid", "keyword")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def held_out(
    request: pytest.FixtureRequest, facts_backend: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, str, Outcome, Outcome]:
    """A held-out set in one namespace: (set, mode, changes, controls)."""
    which, mode = request.param
    got, _ = _outcomes(request, tmp_path_factory, which, mode, facts_backend)
    return (which, mode, *_totals(got[f"ku-{which}"]))


def _totals(got: dict[str, Outcome]) -> tuple[Outcome, Outcome]:
    changes, controls = Outcome(), Outcome()
    for key, part in got.items():
        into = controls if key.endswith("control") else changes
        for field in ("now", "as_of", "linked", "total"):
            setattr(into, field, getattr(into, field) + getattr(part, field))
    return changes, controls


# PostgreSQL's keyword side computes FTS5's own tokens and bm25 (storage/postgres/keyword.py,
# schema step 11), so the calibrated keyword share, and with it "now" and as_of, must come
# out as on SQLite, not only the links.


TIE = 1e-6


def _both(request: pytest.FixtureRequest, factory: pytest.TempPathFactory, corpus: str,
          mode: str) -> tuple[list[Detail], list[Detail]]:
    sqlite = _outcomes(request, factory, corpus, mode, "sqlite")[1]
    postgres = _outcomes(request, factory, corpus, mode, "postgres")[1]
    assert [d[0] for d in sqlite] == [d[0] for d in postgres]
    return sqlite, postgres


@pytest.mark.parametrize("corpus", ["general", "heldout3", "heldout4"])
@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
def test_postgres_links_what_sqlite_links(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, pg_server: object,
    corpus: str, mode: str,
) -> None:
    """Every scenario and control: the same older memory names the same newer (the
    facts, rules and general path decide alike on both backends)."""
    sqlite, postgres = _both(request, tmp_path_factory, corpus, mode)
    differ = [(a[0], a[3], b[3]) for a, b in zip(sqlite, postgres, strict=True) if a[3] != b[3]]
    assert not differ, differ


@pytest.mark.parametrize("corpus", ["general", "heldout3", "heldout4"])
@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
def test_postgres_ranks_what_sqlite_ranks(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, pg_server: object,
    corpus: str, mode: str,
) -> None:
    """Every scenario and control: the same memory first now and as of the earlier date."""
    sqlite, postgres = _both(request, tmp_path_factory, corpus, mode)
    # Rows whose final scores differ by less than TIE may come in either order on either
    # backend (the lifecycle's recency is read at each recall's own moment: measured,
    # two SQLite runs disagree on such ties too); every other first place must agree.
    differ = [(a, b) for a, b in zip(sqlite, postgres, strict=True)
              if a[1:3] != b[1:3] and min(a[4], b[4]) >= TIE]
    assert not differ, differ


def test_suite_shape() -> None:
    changes = [s for s in GENERAL if s["cls"] != "control"]
    assert len(changes) >= 120 and len(GENERAL) - len(changes) >= 20
    every = GENERAL + FRESH + HELDOUT3 + TUNING2 + HELDOUT4 + TUNING3
    assert len({(s["old"], s["new"]) for s in every}) == len(every)
    held = [s for s in HELDOUT3 if s["cls"] != "control"]
    assert len(held) >= 48 and len(HELDOUT3) - len(held) >= 24
    fourth = [s for s in HELDOUT4 if s["cls"] != "control"]
    assert len(fourth) >= 40 and len(HELDOUT4) - len(fourth) >= 15
    # every aspect in every phrasing
    assert len({s["cls"] for s in fourth}) >= 48, sorted({s["cls"] for s in fourth})
    held = held + fourth + [s for s in TUNING3 if s["cls"] != "control"]
    halves = {h: sum(1 for s in changes if half(s) == h) for h in ("tune", "test")}
    assert min(halves.values()) >= 50, halves
    for s in [*changes, *held, *(s for s in TUNING2 if s["cls"] != "control")]:
        assert s["now"].lower() in s["new"].lower() and s["then"].lower() in s["old"].lower()


# (mode, part) -> least share: what each run reached when the weights were fixed, a
# little below; the test half's figures were measured once, after tuning.
FLOORS = {
    ("hybrid", "tune"): {"now": 0.88, "as_of": 0.94},
    ("hybrid", "test"): {"now": 0.87, "as_of": 0.98},
    ("keyword", "tune"): {"now": 0.75, "as_of": 0.92},
    ("keyword", "test"): {"now": 0.75, "as_of": 0.95},
}


@pytest.mark.parametrize("part", ["tune", "test"])
def test_now_and_as_of_top1(outcomes: tuple[str, dict[str, Outcome], Any], part: str) -> None:
    mode, general, _ = outcomes
    got = general[f"{part}:change"]
    floor = FLOORS[(mode, part)]
    assert got.share("now") >= floor["now"], (mode, part, got)
    assert got.share("as_of") >= floor["as_of"], (mode, part, got)


def test_controls_mostly_left_alone(outcomes: tuple[str, dict[str, Outcome], Any]) -> None:
    """Two memories that both stay true: the older must (mostly) not be linked."""
    mode, general, _ = outcomes
    controls = Outcome()
    for part in ("tune", "test"):
        got = general[f"{part}:control"]
        controls.linked += got.linked
        controls.as_of += got.as_of
        controls.total += got.total
    assert controls.as_of == controls.total
    assert controls.linked <= 4, (mode, controls)


def test_fresh_held_out(outcomes: tuple[str, Any, dict[str, Outcome]]) -> None:
    mode, _, fresh = outcomes
    changes, controls = _totals(fresh)
    assert changes.share("now") >= (0.9 if mode == "hybrid" else 0.75), (mode, changes)
    assert changes.share("as_of") >= 0.95, (mode, changes)
    assert controls.linked <= 3, (mode, controls)


# (set, mode) -> least "now", least as_of, most controls linked, least controls' as_of.
# heldout3: measured once after the second round (docs/facts.md), a little below: hybrid
# "now" 48/54, as_of 54/54, 7/26 controls linked; keyword-only 35/54, 53/54, 4/26 (as_of
# on its controls 26/26 hybrid, 25/26 keyword-only: a distractor ranks first).
# heldout4: measured before the third round (hybrid 41/51, 51/51, 3/18; keyword-only
# 35/51, 51/51, 3/18) and at its end, a little below the latter: hybrid 47/51, 51/51,
# 3/18; keyword-only 41/51, 51/51, 3/18.
HELD_OUT_FLOORS = {
    ("heldout3", "hybrid"): (0.85, 0.96, 8, 0.92), ("heldout3", "keyword"): (0.62, 0.96, 5, 0.92),
    ("heldout4", "hybrid"): (0.88, 0.96, 4, 0.94), ("heldout4", "keyword"): (0.76, 0.96, 4, 0.94),
}


def test_held_out_sets(held_out: tuple[str, str, Outcome, Outcome]) -> None:
    which, mode, changes, controls = held_out
    now, as_of, linked, controls_as_of = HELD_OUT_FLOORS[(which, mode)]
    assert changes.share("now") >= now and changes.share("as_of") >= as_of, (mode, changes)
    assert controls.linked <= linked, (mode, controls)
    assert controls.share("as_of") >= controls_as_of, (mode, controls)


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
def test_long_memories_read_by_their_main_clause(
    request: pytest.FixtureRequest, facts_backend: str, tmp_path: Path, mode: str
) -> None:
    """A long memory whose change sits in its main clause, behind an opening clause or
    beside an aside, updates the older; one that only adds or restates does not (tuning
    material: 11/12 keyword-only, 12/12 hybrid, 0/8 controls linked when written)."""
    with _memory(request, facts_backend, tmp_path, mode == "hybrid") as memory:
        changes, controls = _totals(_run(memory, TUNING3, "ku-tuning3"))
    assert changes.now >= 11 and changes.linked >= 11, (mode, changes)
    assert changes.as_of == changes.total, (mode, changes)
    assert controls.linked == 0 and controls.as_of == controls.total, (mode, controls)


@pytest.fixture
def keyword(request: pytest.FixtureRequest, facts_backend: str, tmp_path: Path
            ) -> Iterator[Memory]:
    with _memory(request, facts_backend, tmp_path, dense=False) as memory:
        yield memory


def test_confident_update_names_the_newer_and_keeps_the_older(keyword: Memory) -> None:
    old = keyword.store("The nightly export runs on Jenkins.", namespace="n", observed_at=OLD_AT)
    new = keyword.store("The nightly export moved from Jenkins to Dagster.", namespace="n",
                        observed_at=NEW_AT)
    record = keyword.get(old, namespace="n")
    assert record.superseded_by == new and record.status == "active"
    assert keyword.recall("nightly export", namespace="n")[0].id == new
    assert keyword.recall("nightly export", namespace="n", as_of=THEN)[0].id == old
    (row,) = keyword.internals.db.conn().execute(
        "SELECT state, confidence FROM memory_updates WHERE old_id = ? AND new_id = ?",
        (old, new),
    ).fetchall()
    assert row[0] == "applied" and 0.55 <= row[1] <= 1.0
    keyword.forget(new, namespace="n")
    assert keyword.get(old, namespace="n").superseded_by is None  # forgetting reopens
    links = "SELECT count(*) FROM memory_updates WHERE old_id = ? OR new_id = ?"
    assert keyword.internals.db.conn().execute(links, (new, new)).fetchone()[0] == 0


def test_forgetting_the_older_drops_its_update_link(keyword: Memory) -> None:
    old = keyword.store("The nightly export runs on Jenkins.", namespace="n", observed_at=OLD_AT)
    new = keyword.store("The nightly export moved from Jenkins to Dagster.", namespace="n",
                        observed_at=NEW_AT)
    links = "SELECT count(*) FROM memory_updates WHERE old_id = ? AND new_id = ?"
    conn = keyword.internals.db.conn()
    assert conn.execute(links, (old, new)).fetchone()[0] == 1
    keyword.forget(old, namespace="n")
    assert conn.execute(links, (old, new)).fetchone()[0] == 0
    assert keyword.get(new, namespace="n").status == "active"


def test_unsure_update_is_a_proposal(keyword: Memory) -> None:
    old = keyword.store("Hector is allergic to shellfish.", namespace="n", observed_at=OLD_AT)
    new = keyword.store("Hector started a new job at Ocado.", namespace="n", observed_at=NEW_AT)
    assert keyword.get(old, namespace="n").superseded_by is None  # not a silent edit
    (item,) = keyword.review_queue("n", kind="fact_update")
    assert item.memory_id == old and item.evidence["new"] == new
    assert 0.0 < item.evidence["confidence"] < 0.55 and "aspect" in item.evidence["signals"]
    keyword.review_decide(item.id, "approve")
    assert keyword.get(old, namespace="n").superseded_by == new


def test_rejected_proposal_keeps_both_current(keyword: Memory) -> None:
    old = keyword.store("Hector is allergic to shellfish.", namespace="n", observed_at=OLD_AT)
    new = keyword.store("Hector started a new job at Ocado.", namespace="n", observed_at=NEW_AT)
    (item,) = keyword.review_queue("n", kind="fact_update")
    keyword.review_decide(item.id, "reject")
    assert keyword.get(old, namespace="n").superseded_by is None
    (state,) = keyword.internals.db.conn().execute(
        "SELECT state FROM memory_updates WHERE old_id = ? AND new_id = ?", (old, new)
    ).fetchone()
    assert state == "rejected"


def test_same_value_again_is_not_an_update(keyword: Memory) -> None:
    old = keyword.store("Wren lives in Cardiff.", namespace="n", observed_at=OLD_AT)
    keyword.store("Wren still lives in Cardiff, near the bay.", namespace="n",
                  observed_at=NEW_AT)
    assert keyword.get(old, namespace="n").superseded_by is None


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # a value said to hold on
        ("The mirror syncs from the Frankfurt origin.",
         "The mirror still syncs from the Frankfurt origin after the network change."),
        # one more, said with a closing "too"
        ("We run the primary cluster in Oregon.", "We now run a second cluster in Ohio too."),
        # "still" restating the older, beside a change word about something else
        ("Our CI runs on GitLab CI.",
         "Our CI still runs on GitLab CI; only the runners moved to a new rack."),
    ],
)
def test_kept_or_added_is_not_an_update(keyword: Memory, older: str, newer: str) -> None:
    old = keyword.store(older, namespace="n", observed_at=OLD_AT)
    keyword.store(newer, namespace="n", observed_at=NEW_AT)
    assert keyword.get(old, namespace="n").superseded_by is None
    assert keyword.review_queue("n", kind="fact_update") == []


@pytest.mark.parametrize(
    ("older", "newer", "query"),
    [
        ("Kai lives in Leeds.", "Kai still plays football on Sundays, but he lives in York now.",
         "Where does Kai live?"),
        ("The newsletter is sent with Mailchimp.",
         "The newsletter goes out through Buttondown now, and the podcast feed moved there too.",
         "newsletter"),
    ],
)
def test_a_marker_about_something_else_does_not_block_the_change(
    keyword: Memory, older: str, newer: str, query: str
) -> None:
    """'still' and a closing 'too' keep or add what their own clause says; the change
    stated beside them goes through."""
    old = keyword.store(older, namespace="n", observed_at=OLD_AT)
    new = keyword.store(newer, namespace="n", observed_at=NEW_AT)
    assert keyword.get(old, namespace="n").superseded_by == new
    assert keyword.recall(query, namespace="n")[0].id == new

