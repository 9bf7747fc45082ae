"""Export and lint on both backends: SQLite and PostgreSQL read the same facts, entities
and memories, so the same store gives the same pages (the PostgreSQL side is slow-tier)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aide_memoire import Memory

from ..facts.conftest import facts_settings

NS = "project:wiki"


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_same_store_gives_the_same_pages(
    request: pytest.FixtureRequest, backend: str, tmp_path: Path
) -> None:
    with facts_settings(request, backend, tmp_path / "home", embedding_model="none") as settings, \
            Memory(settings=settings) as memory:
        old = memory.store("Alice works at Acme Corp.", namespace=NS,
                           observed_at="2024-01-15T10:00:00Z")
        new = memory.store("Alice left Acme Corp and joined Globex.", namespace=NS,
                           observed_at="2024-06-15T10:00:00Z")
        memory.store("We chose Postgres for the ledger.", namespace=NS, tags=["decision"])
        wiki = tmp_path / "wiki"
        report = memory.wiki_export(wiki, namespace=NS)
        assert report.decisions == 1 and {"entities/alice.md", "index.md"} <= set(report.written)
        alice = (wiki / "entities" / "alice.md").read_text()
        assert f"- **works_at**: [[entities/globex|Globex]] · since 2024-06-15 · memory `{new}`" \
            in alice
        assert f"2024-01-15 to 2024-06-15 · memory `{old}` · superseded by `{new}`" in alice
        assert memory.wiki_lint(wiki).ok
        assert memory.wiki_export(wiki, namespace=NS).written == []
        newer = memory.store("Alice left Globex and joined Initech.", namespace=NS,
                             observed_at="2024-09-01T10:00:00Z")
        stale = memory.wiki_lint(wiki).problems
        assert "entities/alice.md" in {p.page for p in stale}
        assert any(newer in p.message for p in stale)
