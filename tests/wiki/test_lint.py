"""The wiki lint on fixture pages: each kind of problem found once, a clean tree passing,
through the engine, the CLI (exit codes, --json) and the MCP tool."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.core.errors import InvalidInput
from aide_memoire.engine.wiki.models import PROBLEM_KINDS

from ..clirun import invoke
from ..mcp.conftest import connect

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    with Memory(settings=Settings(home=tmp_path / "home", embedding_model="none")) as m:
        yield m


def test_each_kind_of_problem_is_found_once(memory: Memory) -> None:
    report = memory.wiki_lint(FIXTURES / "broken")
    assert not report.ok and report.pages == 4
    found = [(p.kind, p.page, p.line, p.target) for p in report.problems]
    assert sorted(found) == sorted([
        ("missing_target", "index.md", 10, "entities/ghost"),
        ("orphan", "entities/orphan.md", 0, ""),
        ("missing_backlink", "entities/globex.md", 20, "entities/alice.md"),
        ("no_provenance", "entities/alice.md", 11, ""),
        ("superseded", "entities/alice.md", 10, "m-gone"),
    ])
    assert report.counts() == dict.fromkeys(PROBLEM_KINDS, 1)


def test_a_clean_tree_passes(memory: Memory) -> None:
    report = memory.wiki_lint(FIXTURES / "clean")
    assert report.ok and report.problems == [] and report.pages == 4


def test_pages_of_another_namespace_are_not_checked_against_the_store(memory: Memory) -> None:
    report = memory.wiki_lint(FIXTURES / "broken", namespace="project:other")
    assert "superseded" not in report.counts()
    assert set(report.counts()) == set(PROBLEM_KINDS) - {"superseded"}


def test_links_through_symlinks_and_hidden_folders_are_not_followed(
    memory: Memory, tmp_path: Path
) -> None:
    wiki = tmp_path / "wiki"
    shutil.copytree(FIXTURES / "clean", wiki)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\n[[nowhere]]\n")
    os.symlink(outside, wiki / "linked")
    (wiki / ".obsidian").mkdir()
    (wiki / ".obsidian" / "workspace.md").write_text("[[nowhere]]\n")
    report = memory.wiki_lint(wiki)
    assert report.ok, report.problems


def test_bad_folders_are_refused_with_a_clear_error(memory: Memory, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        memory.wiki_lint(tmp_path / "nowhere")
    with pytest.raises(InvalidInput, match="system folder"):
        memory.wiki_lint("/etc")
    (tmp_path / "page.md").write_text("# x\n")
    with pytest.raises(InvalidInput, match="is not a folder"):
        memory.wiki_lint(tmp_path / "page.md")


def test_cli_exit_codes_and_json(tmp_path: Path) -> None:
    home = tmp_path / "home"
    broken = invoke(home, "wiki", "lint", str(FIXTURES / "broken"), "--json")
    assert broken.returncode == 1
    data = json.loads(broken.stdout)
    assert data["ok"] is False and data["counts"] == dict.fromkeys(PROBLEM_KINDS, 1)
    assert len(data["problems"]) == 5
    clean = invoke(home, "wiki", "lint", str(FIXTURES / "clean"))
    assert clean.returncode == 0 and clean.stdout.strip() == "4 pages, no problems"
    missing = invoke(home, "wiki", "lint", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


async def test_mcp_tool_returns_the_same_report(memory: Memory) -> None:
    async with connect(memory, namespace="default") as client:
        result = await client.call_tool("memory_wiki_lint", {"dir": str(FIXTURES / "broken")})
        assert not result.is_error
        data = result.structured_content
        assert data is not None and data["ok"] is False
        assert sorted(p["kind"] for p in data["problems"]) == sorted(PROBLEM_KINDS)
        clean = await client.call_tool("memory_wiki_lint", {"dir": str(FIXTURES / "clean")})
        assert clean.structured_content == {"pages": 4, "ok": True, "problems": []}


def test_cli_export_then_lint(tmp_path: Path) -> None:
    home = tmp_path / "home"
    invoke(home, "store", "-n", "project:cli", "Alice works at Acme Corp.", check=True)
    wiki = tmp_path / "wiki"
    first = invoke(home, "wiki", "export", str(wiki), "-n", "project:cli", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["pii_masked"] is True and "entities/alice.md" in report["written"]
    again = invoke(home, "wiki", "export", str(wiki), "-n", "project:cli")
    assert "written 0, unchanged" in again.stdout
    assert invoke(home, "wiki", "lint", str(wiki)).returncode == 0
    bad = invoke(home, "wiki", "export", "/etc/aide-wiki-cli", "-n", "project:cli")
    assert bad.returncode == 2 and "system folder" in bad.stderr
    assert not Path("/etc/aide-wiki-cli").exists()
