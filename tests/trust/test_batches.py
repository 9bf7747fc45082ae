"""Batches handle each item on its own: a secret costs its span, an import names each
line it leaves out; all or nothing only when asked."""

from __future__ import annotations

import json
from pathlib import Path

from aide_memoire import Memory
from aide_memoire.tools import call_tool

from .conftest import cli, keyword_settings

TOKEN = "ghp_" + "Yk4" * 12


def test_the_conversation_tool_lists_what_it_redacted(mem: Memory) -> None:
    data = call_tool(mem, "memory_store_conversation", {"turns": [
        {"speaker": "Ana", "content": "morning!"},
        {"speaker": "Ben", "content": f"push with {TOKEN} please"}]}, namespace="t")
    assert len(data["ids"]) == 2
    assert data["redacted"] == ["turn 2 content: github-token"]
    assert TOKEN not in json.dumps(data)


def test_store_many_redacts_any_field_and_reports_it(mem: Memory) -> None:
    result = mem.store_many_report([
        {"content": "deploy notes", "metadata": {"env": {"GITHUB_TOKEN": TOKEN}}},
        {"content": "an ordinary note", "tags": ["ops"]},
    ], namespace="t")
    assert len(result.ids) == 2 and result.added == 2
    assert [(r.index, r.field) for r in result.redactions] == [(0, "metadata")]
    stored = mem.get(result.ids[0], namespace="t")
    assert TOKEN not in json.dumps(stored.metadata)
    assert stored.metadata["env"]["GITHUB_TOKEN"].startswith("[redacted:")


def test_cli_import_names_each_refused_line_and_loads_the_rest(tmp_path: Path) -> None:
    with Memory(settings=keyword_settings(tmp_path / "src")) as src:
        src.store("ordinary memory", namespace="t")
        header, line = list(src.export_lines())
    good = json.loads(line)
    lines = [header, line,
             json.dumps(dict(good, id="b" * 32, content=f"token {TOKEN}")),
             json.dumps(dict(good, id="c" * 32, content="another ordinary memory")),
             json.dumps(dict(good, id="d" * 32, tags=[f"PGPASSWORD={TOKEN}"]))]
    source = tmp_path / "export.jsonl"
    source.write_text("\n".join(lines) + "\n")
    home = tmp_path / "home"
    out = cli(home, "import", str(source), "--json")
    report = json.loads(out.stdout)
    assert report["added"] == 2 and len(report["refused"]) == 2
    assert [r.split(":")[0] for r in report["refused"]] == ["import line 3", "import line 5"]
    assert "import line 3: refused: content" in out.stderr
    assert "import line 5: refused: tags" in out.stderr
    assert TOKEN not in out.stdout + out.stderr
    strict = cli(tmp_path / "strict", "import", str(source), "--all-or-nothing", check=False)
    assert strict.returncode != 0 and "import line 3" in strict.stderr


def test_all_or_nothing_import_writes_nothing_when_a_late_line_holds_a_secret(
        tmp_path: Path) -> None:
    # More lines than a batch (500), the secret past the first batch: each batch is its
    # own transaction, so an import that wrote as it read would leave the first behind.
    with Memory(settings=keyword_settings(tmp_path / "src")) as src:
        src.store("ordinary memory", namespace="t")
        header, line = list(src.export_lines())
    good = json.loads(line)
    lines = [header] + [json.dumps(dict(good, id=f"{i:032x}", content=f"ordinary note {i}"))
                        for i in range(1, 1200)]
    lines[700] = json.dumps(dict(good, id="e" * 32, content=f"token {TOKEN}"))
    source = tmp_path / "export.jsonl"
    source.write_text("\n".join(lines) + "\n")
    home = tmp_path / "home"
    with Memory(settings=keyword_settings(home)) as memory:
        memory.store("kept from before", namespace="t")
    strict = cli(home, "import", str(source), "--all-or-nothing", check=False)
    assert strict.returncode != 0 and "import line 701: refused: content" in strict.stderr
    with Memory(settings=keyword_settings(home)) as memory:
        assert memory.status().namespaces.get("t", 0) == 1
    # The same file with the line left out loads whole.
    del lines[700]
    source.write_text("\n".join(lines) + "\n")
    report = json.loads(cli(home, "import", str(source), "--all-or-nothing", "--json").stdout)
    assert report["added"] == 1198 and report["refused"] == []
