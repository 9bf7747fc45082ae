"""Prose pages in the code index: sections, links, front matter, search, re-index, bounds.

The fixture tree (docs_tree) is copied to a temporary folder for each test, so a
test can edit it, add a secret file or a link, and index it into a real store file.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import string
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.code.index import CodeIndex
from aide_memoire.engine.core.errors import InvalidInput

from ..clirun import invoke

FIXTURE = Path(__file__).parent / "docs_tree"  # beside fixtures/, which other tests index whole
REPO_DOCS = Path(__file__).parents[2] / "docs"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "harbour"
    shutil.copytree(FIXTURE, root)
    return root


def _sections(code: CodeIndex, path: str) -> list[tuple[str, str, int, int]]:
    return [
        (str(kind), str(name), int(start), int(end))
        for kind, name, start, end in code.db.conn().execute(
            "SELECT c.kind, c.name, c.start_line, c.end_line FROM code_chunks c "
            "JOIN code_files f ON f.id = c.file_id WHERE f.path = ? ORDER BY c.start_line",
            (path,),
        )
    ]


def test_markdown_and_rst_pages_are_split_by_heading_with_title_and_trail(
    code: CodeIndex, tree: Path
) -> None:
    report = code.index(tree)
    assert report.parsers["markdown"] == "sections" and report.parsers["rst"] == "sections"
    assert _sections(code, "docs/design.md") == [
        ("section", "Design notes", 1, 4),
        ("section", "Design notes > Storage layout", 5, 8),
        ("section", "Design notes > Storage layout > Garbage collection", 9, 12),
        ("section", "Design notes > Rotating the signing keys", 13, 18),
    ]
    # The front matter's title names the page; text before the first heading is its intro;
    # a '#' line inside a fenced block is no heading.
    assert _sections(code, "README.md") == [
        ("intro", "Harbour > intro", 6, 8),
        ("section", "Harbour > Getting started", 9, 21),
        ("section", "Harbour > Configuration", 22, 27),
    ]
    # Setext (underlined) Markdown headings; RST over- and underlined titles by level.
    assert [n for _, n, _, _ in _sections(code, "docs/guide/install.md")] == [
        "Installing", "Installing > Requirements"]
    assert _sections(code, "docs/runbook.rst") == [
        ("section", "Runbook", 1, 6),
        ("section", "Runbook > Paging", 7, 12),
        ("section", "Runbook > Paging > Rolling back", 13, 17),
    ]


def test_front_matter_is_recorded(code: CodeIndex, tree: Path) -> None:
    code.index(tree)
    row = code.db.conn().execute(
        "SELECT p.title, p.front_matter FROM code_doc_pages p JOIN code_files f "
        "ON f.id = p.file_id WHERE f.path = 'README.md'"
    ).fetchone()
    assert row[0] == "Harbour"
    assert row[1] == '{"owner": "platform team", "tags": ["ops", "deploy"], "title": "Harbour"}'


def test_links_are_resolved_against_the_tree(code: CodeIndex, tree: Path) -> None:
    code.index(tree)
    found = {(ln.path, ln.target, ln.anchor): (ln.status, ln.resolved) for ln in code.links(tree)}
    assert found == {
        ("README.md", "docs/guide/install.md", ""): ("ok", "docs/guide/install.md"),
        ("README.md", "docs/runbook.rst", ""): ("ok", "docs/runbook.rst"),
        ("README.md", "docs/design.md", "storage-layout"): ("ok", "docs/design.md"),
        ("README.md", "design", ""): ("ok", "docs/design.md"),  # [[design]] by file name
        ("README.md", "missing-page", ""): ("missing", None),
        ("README.md", "https://example.org/harbour", ""): ("external", None),
        ("README.md", "docs/nope.md", ""): ("missing", None),
        ("README.md", "../outside.md", ""): ("outside", None),
        ("docs/design.md", "../README.md", "getting-started"): ("ok", "README.md"),
        ("docs/design.md", "guide/install.md", "nowhere"): ("missing_anchor",
                                                            "docs/guide/install.md"),
        ("docs/guide/install.md", "../design.md", ""): ("ok", "docs/design.md"),
        ("docs/runbook.rst", "https://example.org/pager", ""): ("external", None),
        ("docs/runbook.rst", "design.md", ""): ("ok", "docs/design.md"),
        ("docs/runbook.rst", "guide/install", ""): ("ok", "docs/guide/install.md"),
    }
    # Nothing inside the fenced block or inline code was read as a link.
    assert not [ln for ln in code.links(tree) if ln.target in ("nowhere.md", "inline.md")]
    assert {ln.line for ln in code.links(tree, "docs/design.md")} == {17}


def test_a_link_resolves_once_its_target_appears(code: CodeIndex, tree: Path) -> None:
    code.index(tree)
    assert {ln.status for ln in code.links(tree) if ln.target == "docs/nope.md"} == {"missing"}
    (tree / "docs" / "nope.md").write_text("# Nope\n\nNow it exists.\n")
    code.index(tree)
    assert {ln.status for ln in code.links(tree) if ln.target == "docs/nope.md"} == {"ok"}


def test_search_by_a_headings_words_finds_its_section_first(code: CodeIndex, tree: Path) -> None:
    code.index(tree)
    hits = code.search(tree, "garbage collection", kind="docs")
    assert hits[0].name == "Design notes > Storage layout > Garbage collection"
    assert hits[0].location == "docs/design.md:9-12" and hits[0].kind == "section"
    assert code.search(tree, "rolling back", kind="docs")[0].path == "docs/runbook.rst"


def test_kind_keeps_code_and_docs_apart(code: CodeIndex, tree: Path) -> None:
    code.index(tree)
    both = {h.path for h in code.search(tree, "storage layout", limit=20)}
    assert "src/app.py" in both and "docs/design.md" in both
    docs = {h.path for h in code.search(tree, "storage layout", kind="docs", limit=20)}
    assert "src/app.py" not in docs and "docs/design.md" in docs
    assert {h.path for h in code.search(tree, "storage layout", kind="code")} == {"src/app.py"}
    with pytest.raises(InvalidInput, match="unknown kind 'prose'; choose one of code, docs"):
        code.search(tree, "storage", kind="prose")


def test_one_edit_re_reads_one_page_and_its_sections_and_links_follow(
    code: CodeIndex, tree: Path
) -> None:
    code.index(tree)
    page = tree / "docs" / "design.md"
    text = page.read_text().replace("### Garbage collection", "### Compaction")
    page.write_text(text + "\nSee also [[runbook]].\n")
    again = code.index(tree)
    assert (again.indexed, again.unchanged, again.removed) == (1, 4, 0)
    names = [n for _, n, _, _ in _sections(code, "docs/design.md")]
    assert "Design notes > Storage layout > Compaction" in names
    assert not [n for n in names if "Garbage" in n]
    assert code.search(tree, "compaction", kind="docs")[0].path == "docs/design.md"
    design_links = {ln.target: ln.status for ln in code.links(tree, "docs/design.md")}
    assert design_links["runbook"] == "ok"
    # Unchanged pages keep their rows (their links are all still there).
    assert len(code.links(tree, "README.md")) == 8


def test_docs_are_bounded_and_screened_as_code_is(code: CodeIndex, tree: Path) -> None:
    (tree / ".env").write_text("HARBOUR_TOKEN=never-read\n")
    token = "ghp_" + "".join(secrets.choice(string.ascii_letters + string.digits)
                             for _ in range(36))
    (tree / "docs" / "secrets.md").write_text(f"# Keys\n\nThe deploy token is {token}.\n")
    (tree / "node_modules" / "pkg").mkdir(parents=True)
    (tree / "node_modules" / "pkg" / "README.md").write_text("# Vendored\n")
    (tree / "docs" / "huge.md").write_text("# Huge\n" + "word " * 600_000)
    outside = tree.parent / "elsewhere"
    outside.mkdir()
    (outside / "private.md").write_text("# Private\n\nnot for the index\n")
    os.symlink(outside, tree / "docs" / "linked")
    os.symlink(outside / "private.md", tree / "docs" / "private.md")
    (tree / ".gitignore").write_text("drafts/\n")
    (tree / "drafts").mkdir()
    (tree / "drafts" / "idea.md").write_text("# Idea\n")
    report = code.index(tree)
    skipped = {s.path: s.reason for s in report.skipped}
    assert skipped[".env"].startswith("secret file by name")
    assert skipped["docs/huge.md"].startswith("oversized")
    assert skipped["docs/linked"] == skipped["docs/private.md"] == "symlink (not followed)"
    paths = {str(p) for (p,) in code.db.conn().execute("SELECT path FROM code_files")}
    assert not {p for p in paths if p.startswith(("node_modules", "drafts", "docs/linked"))}
    assert "docs/private.md" not in paths and "docs/huge.md" not in paths
    assert [r.path for r in report.redacted] == ["docs/secrets.md"]
    hit = code.search(tree, "deploy token", kind="docs")[0]
    assert hit.path == "docs/secrets.md"
    assert token not in hit.snippet and "[redacted:" in hit.snippet
    assert not code.search(tree, "private", kind="docs")


def test_system_folders_are_refused_for_docs_too(code: CodeIndex) -> None:
    with pytest.raises(InvalidInput, match="system folder"):
        code.index("/etc")


def test_this_repositorys_own_docs_are_indexed_and_their_links_hold(
    code: CodeIndex, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    shutil.copytree(REPO_DOCS, root / "docs")
    report = code.index(root)
    pages = sorted(p.name for p in REPO_DOCS.glob("*.md"))
    assert report.languages["markdown"] == len(pages)
    names = [str(n) for (n,) in code.db.conn().execute(
        "SELECT c.name FROM code_chunks c JOIN code_files f ON f.id = c.file_id "
        "WHERE f.path = 'docs/code-index.md'")]
    assert "The code index > Bounds: system folders, secret files, secret text" in names
    hit = code.search(root, "bounds system folders secret files", kind="docs")[0]
    assert hit.location.startswith("docs/code-index.md:")
    assert "Bounds" in (hit.name or "")
    # Every link from one page of docs/ to another (and to a heading of it) resolves.
    inside = [ln for ln in code.links(root)
              if ln.status != "external" and not ln.target.startswith("../")]
    assert inside, "docs/ links between its pages"
    assert [ln for ln in inside if ln.status != "ok"] == []


@pytest.mark.slow
def test_search_by_paraphrase_with_the_real_model(tree: Path, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")  # docs_dense is on, code_dense off
    assert settings.docs_dense and not settings.code_dense
    with Memory(settings=settings) as memory:
        memory.code_index(tree)
        # Only the prose sections were encoded; the code was not.
        kinds = {str(k) for (k,) in memory.internals.db.conn().execute(
            "SELECT DISTINCT c.language FROM code_vectors v JOIN code_chunks c "
            "ON c.id = v.chunk_id")}
        assert kinds == {"markdown", "rst"}
        assert all("dense" not in h.ranks for h in memory.code_search(tree, "deploy region"))
        # No word of the question is in the section it is about (nor its heading).
        query = "how frequently is the secret material for authenticating builds changed"
        hits = memory.code_search(tree, query, kind="docs", limit=3)
        assert hits[0].name == "Design notes > Rotating the signing keys", [h.name for h in hits]
        assert hits[0].ranks == {"dense": 1}  # found by meaning alone
        # When a keyword ranker finds another section by a shared word ("old" in "the old
        # one"), fusion may put that first: the paraphrased section stays in the top 3.
        hits = memory.code_search(tree, "what happens to old unused data", kind="docs", limit=3)
        gc = [h for h in hits if h.name == "Design notes > Storage layout > Garbage collection"]
        assert gc and gc[0].ranks.get("dense") == 1, [h.name for h in hits]


def test_cli_code_links_and_docs_search(tree: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert invoke(home, "code-index", str(tree)).returncode == 0
    broken = invoke(home, "code-links", str(tree), "--broken", "--json")
    assert broken.returncode == 1
    links = json.loads(broken.stdout)["links"]
    assert sorted((ln["path"], ln["target"], ln["status"]) for ln in links) == [
        ("README.md", "../outside.md", "outside"),
        ("README.md", "docs/nope.md", "missing"),
        ("README.md", "missing-page", "missing"),
        ("docs/design.md", "guide/install.md", "missing_anchor"),
    ]
    every = invoke(home, "code-links", str(tree), "--path", "docs/runbook.rst")
    assert every.returncode == 0
    assert "docs/runbook.rst:11  ok             guide/install -> docs/guide/install.md" \
        in every.stdout
    found = invoke(home, "code-search", str(tree), "rolling back", "--kind", "docs", "--json")
    assert json.loads(found.stdout)["hits"][0]["name"] == "Runbook > Paging > Rolling back"
    bad = invoke(home, "code-search", str(tree), "x", "--kind", "prose")
    assert bad.returncode == 2 and "prose" in bad.stderr


async def test_mcp_code_search_takes_docs_as_a_kind(tree: Path, tmp_path: Path) -> None:
    from ..mcp.conftest import connect

    settings = Settings(home=tmp_path / "home", embedding_model="none")
    with Memory(settings=settings) as memory:
        async with connect(memory) as client:
            indexed = await client.call_tool("memory_code_index", {"root": str(tree)})
            assert not indexed.is_error
            found = await client.call_tool("memory_code_search", {
                "root": str(tree), "query": "garbage collection", "kind": "docs"})
            assert found.structured_content is not None
            hits = found.structured_content["hits"]
            assert hits[0]["name"] == "Design notes > Storage layout > Garbage collection"
            assert {h["language"] for h in hits} <= {"markdown", "rst"}
            bad = await client.call_tool("memory_code_search", {
                "root": str(tree), "query": "x", "kind": "prose"})
            assert bad.is_error
