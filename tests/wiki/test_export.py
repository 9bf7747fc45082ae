"""The wiki export of a store built from the knowledge-update suites (tests/facts/*.json
and the rule scenarios of test_knowledge_updates): pages per entity, current values
first, superseded ones with dates, every item with its memory id; idempotent; the lint
of an old export names the page whose fact the store superseded since."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings

from ..facts.test_knowledge_updates import NEW_AT, OLD_AT, SCENARIOS

SUITES = sorted(p for p in (Path(__file__).parents[1] / "facts").glob("knowledge_updates_*.json"))
NAMESPACE = "project:suites"
LATER = "2024-09-01T10:00:00Z"


@dataclass
class Built:
    memory: Memory
    pairs: list[tuple[str, str]]  # (old id, new id) of every scenario and control
    wiki: Path


def _build(memory: Memory) -> list[tuple[str, str]]:
    items: list[str] = []
    news: list[str] = []
    for suite in SUITES:
        data = json.loads(suite.read_text())
        for s in [*data["scenarios"], *data.get("controls", [])]:
            items.append(s["old"])
            news.append(s["new"])
    for s in SCENARIOS:
        if s.speaker is None:
            items.append(s.old)
            news.append(s.new)
    olds = [memory.store(text, namespace=NAMESPACE, observed_at=OLD_AT) for text in items]
    return list(zip(olds, [memory.store(text, namespace=NAMESPACE, observed_at=NEW_AT)
                           for text in news], strict=True))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    root = tmp_path_factory.mktemp("suites")
    with Memory(settings=Settings(home=root / "home", embedding_model="none")) as memory:
        pairs = _build(memory)
        memory.wiki_export(root / "wiki", namespace=NAMESPACE)
        yield Built(memory, pairs, root / "wiki")


def _state(folder: Path) -> dict[str, tuple[int, str]]:
    return {p.relative_to(folder).as_posix(): (p.stat().st_mtime_ns,
                                               hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(folder.rglob("*.md"))}


def _sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = ""
    for line in text.split("\n"):
        if line.startswith("## "):
            current = line[3:]
            out[current] = []
        elif line.startswith("- ") and current:
            out[current].append(line)
    return out


def test_a_page_per_entity_and_an_index_listing_them(built: Built) -> None:
    conn = built.memory.internals.db.conn()
    entities = {str(n) for (n,) in conn.execute(
        "SELECT name FROM entities WHERE namespace = ?", (NAMESPACE,))}
    pages = sorted((built.wiki / "entities").glob("*.md"))
    assert len(pages) >= len(entities) > 100
    index = (built.wiki / "index.md").read_text()
    for page in pages:
        assert f"[[entities/{page.stem}|" in index
    titles = {p.read_text().split("\n# ", 1)[1].split("\n", 1)[0].lower() for p in pages}
    assert {"alice", "globex", "acme corp", "numpy"} <= titles
    for page in pages:  # stable, safe names: lower case, digits and hyphens only
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", page.stem), page.name


def test_current_values_first_then_superseded_ones_with_dates(built: Built) -> None:
    alice = _sections((built.wiki / "entities" / "alice.md").read_text())
    text = (built.wiki / "entities" / "alice.md").read_text()
    assert text.index("## Current facts") < text.index("## Superseded facts")
    (now,) = [line for line in alice["Current facts"] if "**works_at**" in line]
    (then,) = [line for line in alice["Superseded facts"] if "**works_at**" in line]
    assert "[[entities/globex|Globex]]" in now and "since 2024-06-15" in now
    assert "[[entities/acme-corp|Acme Corp]]" in then and "2024-01-15 to 2024-06-15" in then
    old, new = next(p for p in built.pairs
                    if built.memory.get(p[0], namespace=NAMESPACE).content
                    == "Alice works at Acme Corp.")
    assert f"memory `{new}`" in now
    assert f"memory `{old}`" in then and f"superseded by `{new}`" in then
    # The memories themselves: the current one listed, the replaced one below with dates.
    assert text.index("## Memories") < text.index("## Superseded memories")
    assert any(f"memory `{new}`" in line for line in alice["Memories"])
    assert any(f"memory `{old}`" in line and "2024-01-15 to 2024-06-15" in line
               for line in alice["Superseded memories"])


def test_every_fact_of_the_store_is_on_its_subjects_page_with_its_memory_id(
    built: Built,
) -> None:
    conn = built.memory.internals.db.conn()
    rows = conn.execute(
        "SELECT subject, predicate, memory_id, valid_to FROM facts WHERE namespace = ?",
        (NAMESPACE,),
    ).fetchall()
    assert len(rows) > 50
    texts = {p.read_text().split("\n# ", 1)[1].split("\n", 1)[0].lower(): p.read_text()
             for p in (built.wiki / "entities").glob("*.md")}
    pages = {re.search(r"^# (.*)$", t, re.M).group(1).lower(): _sections(t)  # type: ignore[union-attr]
             for t in texts.values()}
    by_subject: dict[str, dict[str, list[str]]] = {}
    for name, sections in pages.items():
        by_subject[name] = sections
    missing = []
    for subject, predicate, memory_id, valid_to in rows:
        section = "Current facts" if valid_to is None else "Superseded facts"
        page = by_subject.get(str(subject))
        lines = page.get(section, []) if page else []
        if not any(f"**{predicate}**" in ln and f"memory `{memory_id}`" in ln for ln in lines):
            missing.append((subject, predicate, memory_id, section))
    assert missing == []


def test_every_general_update_the_store_linked_shows_as_superseded(built: Built) -> None:
    linked = [(o, n) for o, n in built.pairs
              if built.memory.get(o, namespace=NAMESPACE).superseded_by == n]
    assert len(linked) > 50
    everything = "\n".join(p.read_text() for p in built.wiki.rglob("*.md"))
    for old, new in linked:
        # Until the change: the newer memory's date, or earlier ("I moved last month").
        found = re.search(rf"^- 2024-01-15 to (2024-\d\d-\d\d) · memory `{old}` · superseded by "
                          rf"`{new}`: ", everything, re.M)
        assert found and "2024-01-15" < found.group(1) <= "2024-06-15", old


def test_every_item_has_provenance_and_a_fresh_export_lints_clean(built: Built) -> None:
    report = built.memory.wiki_lint(built.wiki)
    assert report.ok, report.problems[:5]
    assert report.pages == len(list(built.wiki.rglob("*.md")))
    ids = set(re.findall(r"memory `([^`]+)`", "\n".join(
        p.read_text() for p in built.wiki.rglob("*.md"))))
    assert ids and all(built.memory.get(i, namespace=NAMESPACE) for i in ids)


def test_a_second_export_changes_no_file(built: Built) -> None:
    before = _state(built.wiki)
    report = built.memory.wiki_export(built.wiki, namespace=NAMESPACE)
    assert report.written == [] and report.removed == []
    assert report.unchanged == report.pages == len(before)
    assert _state(built.wiki) == before  # mtimes and hashes


def test_lint_on_an_old_export_names_the_page_whose_fact_was_superseded(
    tmp_path: Path,
) -> None:
    with Memory(settings=Settings(home=tmp_path / "home", embedding_model="none")) as memory:
        _build(memory)
        wiki = tmp_path / "wiki"
        memory.wiki_export(wiki, namespace=NAMESPACE)
        newer = memory.store("Alice left Globex and joined Initech.", namespace=NAMESPACE,
                             observed_at=LATER)
        report = memory.wiki_lint(wiki)
        stale = [p for p in report.problems if p.kind == "superseded"]
        assert report.counts() == {"superseded": len(stale)}
        fact = [p for p in stale if "works_at" in p.message]
        assert [p.page for p in fact] == ["entities/alice.md"] and newer in fact[0].message
        # The memory it came from is listed as current on the pages of the entities it
        # names (Alice, Globex, Acme Corp): each of those pages is named too, and nothing else.
        (replaced,) = {p.target for p in stale}
        assert memory.get(replaced, namespace=NAMESPACE).superseded_by == newer
        assert {p.page for p in stale} == {
            "entities/alice.md", "entities/globex.md", "entities/acme-corp.md"}
        after = memory.wiki_export(wiki, namespace=NAMESPACE)
        assert "entities/alice.md" in after.written
        assert memory.wiki_lint(wiki).ok
