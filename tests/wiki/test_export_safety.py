"""What a wiki export must never do: show a held or forgotten memory, leak personal data
unless asked, build a path from user text, write outside its folder or through a link,
overwrite a file it did not make, or mix two namespaces in one folder."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.core.errors import InvalidInput
from aide_memoire.engine.wiki.names import page_stem, safe_path

from ..trust.corpus import corpus

NS = "project:wiki"


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    with Memory(settings=Settings(home=tmp_path / "home", embedding_model="none")) as m:
        yield m


def _all(folder: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(folder.rglob("*.md")))


def test_held_memories_never_reach_a_page(memory: Memory, tmp_path: Path) -> None:
    memory.store("Priya works at Initech.", namespace=NS)
    held = [memory.store(s.text, namespace=NS) for s in corpus() if s.label == "injection"]
    assert {memory.get(i, namespace=NS).status for i in held} == {"quarantined"}
    memory.wiki_export(tmp_path / "wiki", namespace=NS)
    text = _all(tmp_path / "wiki")
    assert "Priya" in text
    assert not [i for i in held if i in text]


def test_a_forgotten_memory_leaves_the_wiki_at_the_next_export(
    memory: Memory, tmp_path: Path
) -> None:
    kept = memory.store("Rosa lives in Lisbon.", namespace=NS)
    gone = memory.store("Tomasz works at Allegro.", namespace=NS)
    wiki = tmp_path / "wiki"
    first = memory.wiki_export(wiki, namespace=NS)
    assert "entities/tomasz.md" in first.written and gone in _all(wiki)
    memory.forget(gone, namespace=NS)
    second = memory.wiki_export(wiki, namespace=NS)
    assert "entities/tomasz.md" in second.removed and not (wiki / "entities/tomasz.md").exists()
    assert gone not in _all(wiki) and "Allegro" not in _all(wiki) and kept in _all(wiki)
    assert memory.wiki_lint(wiki).ok


def test_personal_data_is_masked_unless_asked(memory: Memory, tmp_path: Path) -> None:
    memory.store("Noor's email is noor.haddad@example.com and she works at Klarna.",
                 namespace=NS)
    masked = memory.wiki_export(tmp_path / "masked", namespace=NS)
    assert masked.pii_masked and "noor.haddad@example.com" not in _all(tmp_path / "masked")
    assert "[EMAIL]" in _all(tmp_path / "masked")
    shown = memory.wiki_export(tmp_path / "shown", namespace=NS, reveal_pii=True)
    assert not shown.pii_masked and "noor.haddad@example.com" in _all(tmp_path / "shown")
    events = [json.loads(d) for (d,) in memory.internals.db.conn().execute(
        "SELECT detail FROM audit_events WHERE action = 'export' ORDER BY seq")]
    assert events == [{"count": 1, "reveal_pii": False}, {"count": 1, "reveal_pii": True}]


def test_decisions_and_pinned_memories_get_a_page_each(memory: Memory, tmp_path: Path) -> None:
    decision = memory.store("We chose Postgres over MySQL for the ledger.", namespace=NS,
                            tags=["decision"], observed_at="2024-03-02T09:00:00Z")
    pinned = memory.store("Release notes go out on Thursdays.", namespace=NS, tags=["pinned"])
    memory.store("An ordinary note about Postgres tuning.", namespace=NS)
    wiki = tmp_path / "wiki"
    memory.wiki_export(wiki, namespace=NS)
    pages = sorted(p.name for p in (wiki / "decisions").glob("*.md"))
    assert len(pages) == 2
    assert pages[0].startswith("2024-03-02-we-chose-postgres-over-mysql-for-")
    page = (wiki / "decisions" / pages[0]).read_text()
    assert f"memory `{decision}`" in page and "[[entities/postgres|Postgres]]" in page
    assert pinned in _all(wiki / "decisions")
    backlinks = (wiki / "entities" / "postgres.md").read_text().split("## Backlinks", 1)[1]
    assert f"[[decisions/{pages[0][:-3]}|" in backlinks
    assert memory.wiki_lint(wiki).ok


@pytest.mark.parametrize("name", [
    "../../etc/passwd", "C:\\Windows\\system32", "con", "a/b", ".hidden", "x" * 300,
    "Ünïcødé Näme", "名前", "", "..", "aux.txt",
])
def test_page_names_from_any_text_are_safe_and_stable(name: str) -> None:
    stem = page_stem(name, name.lower())
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", stem), stem
    assert len(stem) <= 80 and stem not in ("con", "aux", "nul")
    assert stem == page_stem(name, name.lower())  # stable
    assert page_stem("C++", "c++") != page_stem("C", "c")
    assert page_stem("Acme Corp", "acme corp") == "acme-corp"


def test_paths_never_leave_the_folder_or_pass_through_a_link(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    root.mkdir()
    for bad in ("../x.md", "entities/../../x.md", "/etc/passwd", "a\\b.md", "c:x.md", ""):
        with pytest.raises(InvalidInput):
            safe_path(root, bad)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, root / "entities")
    with pytest.raises(InvalidInput, match="symbolic link"):
        safe_path(root, "entities/alice.md")


def test_a_linked_subfolder_stops_the_export_before_anything_is_written(
    memory: Memory, tmp_path: Path
) -> None:
    memory.store("Ines works at Zalando.", namespace=NS)
    wiki, elsewhere = tmp_path / "wiki", tmp_path / "elsewhere"
    wiki.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, wiki / "entities")
    with pytest.raises(InvalidInput, match="symbolic link"):
        memory.wiki_export(wiki, namespace=NS)
    assert list(elsewhere.iterdir()) == [] and not (wiki / "index.md").exists()


def test_a_file_it_did_not_write_is_left_alone(memory: Memory, tmp_path: Path) -> None:
    memory.store("Ines works at Zalando.", namespace=NS)
    wiki = tmp_path / "wiki"
    (wiki / "entities").mkdir(parents=True)
    mine = wiki / "entities" / "ines.md"
    mine.write_text("# My own notes on Ines\n")
    with pytest.raises(InvalidInput, match="in the way"):
        memory.wiki_export(wiki, namespace=NS)
    assert mine.read_text() == "# My own notes on Ines\n"
    assert not (wiki / "index.md").exists()


def test_one_folder_holds_one_namespace(memory: Memory, tmp_path: Path) -> None:
    memory.store("Ines works at Zalando.", namespace=NS)
    memory.store("Bo lives in Oslo.", namespace="project:other")
    wiki = tmp_path / "wiki"
    memory.wiki_export(wiki, namespace=NS)
    with pytest.raises(InvalidInput, match="holds the wiki of namespace 'project:wiki'"):
        memory.wiki_export(wiki, namespace="project:other")
    assert "Zalando" in _all(wiki) and "Oslo" not in _all(wiki)


def test_bad_input_gets_a_clear_error(memory: Memory, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="namespace"):
        memory.wiki_export(tmp_path / "w", namespace="bad namespace!")
    with pytest.raises(InvalidInput, match="system folder"):
        memory.wiki_export("/etc/aide-wiki-test", namespace=NS)
    assert not Path("/etc/aide-wiki-test").exists()  # refused before anything was made
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidInput, match="is not a folder"):
        memory.wiki_export(tmp_path / "file", namespace=NS)


def test_unfiled_notes_get_a_page_that_goes_when_they_do(memory: Memory, tmp_path: Path) -> None:
    note = memory.store("the nightly backup runs at two in the morning.", namespace=NS)
    memory.store("Ines works at Zalando.", namespace=NS)
    wiki = tmp_path / "wiki"
    memory.wiki_export(wiki, namespace=NS)
    assert f"memory `{note}`" in (wiki / "unfiled.md").read_text()
    assert "[[unfiled|Unfiled memories]]" in (wiki / "index.md").read_text()
    assert memory.wiki_lint(wiki).ok
    memory.forget(note, namespace=NS)
    report = memory.wiki_export(wiki, namespace=NS)
    assert report.removed == ["unfiled.md"] and not (wiki / "unfiled.md").exists()
    assert memory.wiki_lint(wiki).ok


def test_links_written_in_a_memory_stay_text(memory: Memory, tmp_path: Path) -> None:
    memory.store("Ines works at Zalando, see [[secret-page]] and [the wiki](../../x.md).",
                 namespace=NS)
    wiki = tmp_path / "wiki"
    memory.wiki_export(wiki, namespace=NS)
    assert "[[secret-page]]" not in _all(wiki) and "](../../x.md)" not in _all(wiki)
    assert memory.wiki_lint(wiki).ok
