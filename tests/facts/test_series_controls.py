"""Series are not updates: memories of the same shape that record separate events or items.

series_controls.json holds series written from classes (event logs, numbered runs,
tickets, pull requests, incidents, dated stand-ups, deploys, lists of items). Every
member of every series is stored in ONE namespace, a day apart, as an agent would write
them; none may be linked to another or proposed as an update of another. The series are
split into a tuning half and a test half by a fixed hash of the first member; the
series gate (docs/facts.md, "Series are not updates") was fitted on the tuning half.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from aide_memoire import Memory, Settings

HERE = Path(__file__).parent
SERIES: list[dict[str, Any]] = json.loads(
    (HERE / "series_controls.json").read_text(encoding="utf-8")
)["series"]
NAMESPACE = "series"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def half(s: dict[str, Any]) -> str:
    digest = hashlib.sha256(s["members"][0].encode()).digest()
    return "tune" if digest[0] % 2 == 0 else "test"


def run(memory: Memory, series: list[dict[str, Any]], namespace: str) -> dict[str, list[int]]:
    """Store every series, member by member; per half: [series touched, links, proposals,
    memories stored]."""
    owner: dict[str, int] = {}
    for step in range(max(len(s["members"]) for s in series)):
        for i, s in enumerate(series):
            if step < len(s["members"]):
                at = (START + timedelta(days=step, minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
                owner[memory.store(s["members"][step], namespace=namespace, observed_at=at)] = i
    touched: dict[int, list[int]] = {}
    for (old_id,) in memory.internals.db.conn().execute(
        "SELECT id FROM memories WHERE namespace = ? AND superseded_by IS NOT NULL",
        (namespace,),
    ):
        touched.setdefault(owner[old_id], [0, 0])[0] += 1
    for item in memory.review_queue(namespace, 1000):
        if item.kind == "fact_update":
            touched.setdefault(owner[str(item.evidence["old"])], [0, 0])[1] += 1
    out = {h: [0, 0, 0, 0] for h in ("tune", "test")}
    for i, s in enumerate(series):
        row = out[half(s)]
        links, proposals = touched.get(i, [0, 0])
        row[0] += bool(links or proposals)
        row[1] += links
        row[2] += proposals
        row[3] += len(s["members"])
    return out


@pytest.fixture(scope="module", params=["hybrid", "keyword"])
def outcome(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, dict[str, list[int]]]]:
    mode = str(request.param)
    home = tmp_path_factory.mktemp(f"series-{mode}")
    settings = Settings(home=home) if mode == "hybrid" else Settings(
        home=home, embedding_model="none")
    with Memory(settings=settings) as memory:
        yield mode, run(memory, SERIES, NAMESPACE)


def test_corpus_shape() -> None:
    assert len(SERIES) >= 40
    assert len({len(s["members"]) for s in SERIES}) >= 1
    assert all(len(s["members"]) >= 3 for s in SERIES)
    texts = [m for s in SERIES for m in s["members"]]
    assert len(set(texts)) == len(texts)
    assert len({s["cls"] for s in SERIES}) >= 12
    halves = [half(s) for s in SERIES]
    assert min(halves.count("tune"), halves.count("test")) >= 15


# Series of the tuning half still touched when the gate was fixed (measured, then kept
# as a ceiling): an elaboration of an item ("Alice reviewed PR 12" / "... and left two
# comments") and names under a shared frame ("accepted at PyCon" / "at EuroPython").
TUNE_CEILING = {"hybrid": (2, 0), "keyword": (2, 2)}  # (series touched, proposals)


def test_tuning_half_is_left_alone(outcome: tuple[str, dict[str, list[int]]]) -> None:
    mode, got = outcome
    touched, links, proposals, stored = got["tune"]
    assert touched <= TUNE_CEILING[mode][0] and proposals <= TUNE_CEILING[mode][1], (mode, got)
    assert links + proposals <= stored // 10, (mode, got)


def test_test_half_is_left_alone(outcome: tuple[str, dict[str, list[int]]]) -> None:
    """Held out: at most one series in ten touched, and under 3 proposals per 100
    memories."""
    mode, got = outcome
    touched, links, proposals, stored = got["test"]
    series = sum(1 for s in SERIES if half(s) == "test")
    assert touched <= series // 10, (mode, got)
    assert links <= series // 10, (mode, got)
    assert proposals * 100 <= 3 * stored, (mode, got)


def test_many_routine_notes_raise_no_proposal(tmp_path: Path) -> None:
    """The integration failure: ten notes of one shape proposed nine updates of the first."""
    with Memory(settings=Settings(home=tmp_path, embedding_model="none")) as memory:
        for n in range(10):
            memory.store(f"Routine note number {n} about the build cache", namespace="x")
        assert memory.review_queue("x") == []
        assert memory.internals.db.conn().execute(
            "SELECT count(*) FROM memories WHERE superseded_by IS NOT NULL").fetchone() == (0,)
