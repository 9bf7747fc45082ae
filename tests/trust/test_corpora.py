"""The adversarial corpora (tests/trust/corpora/): each half meets its floor.

The corpora are generated from classes by corpora/generate.py with a fixed seed; the
files in the repository must be what the generator writes. Rules were tuned on the
``tune`` half only; the ``holdout`` half is asserted with the same floors.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aide_memoire import Memory

from .conftest import keyword_settings
from .corpora import NAMES, figures, load
from .corpora.generate import build

# Share of rows that must come out as expected, per half (refused / active / held / active).
FLOORS = {"secrets": 0.95, "lookalikes": 0.92, "injections": 0.92, "imperatives": 0.97}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("corpora") / "home"
    with Memory(settings=keyword_settings(home)) as memory:
        yield figures(memory)


def test_files_are_what_the_generator_writes() -> None:
    built = build()
    for name in NAMES:
        on_disk = load(name)
        assert on_disk == [json.loads(json.dumps(row, sort_keys=True)) for row in built[name]]


def test_corpora_are_large_and_varied() -> None:
    secrets = load("secrets")
    assert len(secrets) >= 150
    assert len({row["format"].split(":")[0] for row in secrets}) >= 40
    assert {row["field"] for row in secrets} >= {"content", "metadata", "source", "speaker"}
    assert len(load("lookalikes")) >= 100 and len(load("imperatives")) >= 100
    injections = load("injections")
    assert len(injections) >= 100
    assert {row["format"] for row in injections} >= {
        "homoglyph", "fullwidth", "zero-width", "leetspeak", "spaced", "emphasis", "entities",
        "urlencode", "extra-words", "quotes"}
    for name in NAMES:  # both halves are populated
        halves = {row["half"] for row in load(name)}
        assert halves == {"tune", "holdout"}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("half", ["tune", "holdout"])
def test_each_half_meets_its_floor(results: dict[str, Any], name: str, half: str) -> None:
    figures_ = results[name]["halves"][half]
    assert figures_["n"] >= 40
    assert figures_["rate"] >= FLOORS[name], (name, half, figures_)


def test_no_secret_is_echoed_in_a_refusal(tmp_path: Path) -> None:
    from aide_memoire import SecretRefused

    with Memory(settings=keyword_settings(tmp_path / "home")) as memory:
        for row in load("secrets")[:60]:
            if row["field"] != "content":
                continue
            try:
                memory.store(row["text"], namespace="echo")
            except SecretRefused as exc:
                for piece in row["text"].split():
                    if len(piece) >= 12 and piece.isascii():
                        assert piece not in str(exc)
