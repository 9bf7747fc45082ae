"""The class-written corpora of issue #26 (tests/trust/classes/): each half within the
issue's aims. The rules were written before these files; only the tune half's misses
were looked at and mended, so the holdout half estimates what unseen text gets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aide_memoire import Memory

from .classes import NAMES, figures, load
from .classes.generate import build, half
from .conftest import keyword_settings

# The issue's aims, per corpus: at most this many rows not as expected (secrets stored,
# ordinary notes refused, attacks active, ordinary notes and team rules held).
AIMS = {"secrets": 3, "keys": 2, "attacks": 8, "rules": 1}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("classes") / "home"
    with Memory(settings=keyword_settings(home)) as memory:
        yield figures(memory)


def test_files_are_what_the_generator_writes_and_halves_follow_the_hash() -> None:
    built = build()
    for name in NAMES:
        rows = load(name)
        assert rows == [json.loads(json.dumps(r, sort_keys=True)) for r in built[name]]
        assert all(row["half"] == half(row["text"]) for row in rows)
        assert {row["half"] for row in rows} == {"tune", "holdout"}
    sizes = {name: len(load(name)) for name in NAMES}
    assert sizes["secrets"] >= 60 and sizes["keys"] >= 43
    assert sizes["attacks"] >= 40 and sizes["rules"] >= 30


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("part", ["tune", "holdout"])
def test_each_half_is_within_the_aim(results: dict[str, Any], name: str, part: str) -> None:
    figures_ = results[name]["halves"][part]
    assert figures_["not_expected"] <= AIMS[name], (name, part, figures_)


def test_the_corpora_cover_the_issues_classes() -> None:
    classes = {name: {row["class"] for row in load(name)} for name in NAMES}
    assert {"stated-letters", "stated-digits", "env-slash", "env-plus", "stored-as"} <= (
        classes["secrets"])
    assert {"cache-key", "redis-key", "s3-key", "sort-key", "migration-key"} <= classes["keys"]
    assert {"paraphrase", "translation-fr", "translation-es", "translation-de",
            "translation-zh", "translation-ru", "poisoning", "exfil-image", "python-c"} <= (
        classes["attacks"])
    assert "team-rule" in classes["rules"]


def test_a_token_in_one_turn_costs_one_span(tmp_path: Path) -> None:
    token = "ghp_" + "Zq8" * 12
    turns = [{"speaker": "Ana", "content": "I noticed a spiderman pin on your purse"},
             {"speaker": "Ben", "content": "Recharging with your passion is awesome!"},
             {"speaker": "Ana", "content": f"the deploy token is {token}, keep it safe"},
             {"speaker": "Ben", "content": "Pass `--preview` to try the new rules"}]
    with Memory(settings=keyword_settings(tmp_path / "home")) as memory:
        result = memory.store_conversation_report(turns, namespace="chat")
        assert len(result.ids) == 4 and result.added == 4
        assert [(r.index, r.field) for r in result.redactions] == [(2, "content")]
        stored = [memory.get(i, namespace="chat") for i in result.ids]
        assert [s.status for s in stored] == ["active"] * 4
        assert stored[2].content.startswith("the deploy token is [redacted:")
        assert [s.content for s in stored[:2]] == [t["content"] for t in turns[:2]]
        assert all(token not in (s.context or "") for s in stored)
        many = memory.store_many([{"content": t["content"]} for t in turns], namespace="notes")
        assert len(many) == 4
        assert "[redacted:" in memory.get(many[2], namespace="notes").content
