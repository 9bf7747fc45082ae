"""The code commands end to end on a temp store, in this process (tests/clirun.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.clirun import Completed, invoke

FIXTURES = Path(__file__).parent / "fixtures"


def run(home: Path, *args: str) -> Completed:
    return invoke(home, *args)


def test_index_search_symbol_json(tmp_path: Path) -> None:
    home = tmp_path / "home"
    indexed = run(home, "code-index", str(FIXTURES), "--json")
    assert indexed.returncode == 0, indexed.stderr
    report = json.loads(indexed.stdout)
    assert report["root"] == str(FIXTURES.resolve()) and report["files"] == 7
    assert "indexing" not in indexed.stderr  # no progress bar off a terminal / with --json

    found = run(home, "code-search", str(FIXTURES), "triangle area", "--language", "java",
                "--limit", "3", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert hits[0]["path"] == "Shapes.java"
    assert {"path", "start_line", "end_line", "snippet", "location"} <= hits[0].keys()

    symbol = run(home, "code-symbol", str(FIXTURES), "NewRect", "--json")
    results = json.loads(symbol.stdout)["results"]
    assert results[0] == {**results[0], "role": "definition", "path": "shapes.go",
                          "start_line": 14, "end_line": 16}

    text = run(home, "code-symbol", str(FIXTURES), "NewRect")
    assert "shapes.go:14-16" in text.stdout


def test_errors_exit_non_zero_with_a_message(tmp_path: Path) -> None:
    home = tmp_path / "home"
    missing = run(home, "code-index", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    unindexed = run(home, "code-search", str(tmp_path), "anything", "--json")
    assert unindexed.returncode == 1 and "code-index" in unindexed.stderr
    assert unindexed.stdout == ""
