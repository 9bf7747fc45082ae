"""A person follows docs/: every relative link in README.md and docs/*.md reaches a file,
and every in-page anchor it names is a heading of that file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    out = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            title = re.sub(r"[^\w\- ]", "", title)
            out.add(title.replace(" ", "-"))
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{page.name}: broken link {target}"
        if anchor and dest.suffix == ".md":
            assert anchor in _anchors(dest), f"{page.name}: no heading for #{anchor} in {dest.name}"


def test_every_page_of_docs_is_linked_from_another_page_of_docs() -> None:
    # docs/ is read as a folder on its own (wiki lint, the code index, a docs site): a
    # page only the README links to is an orphan there.
    docs = [p for p in PAGES if p.parent.name == "docs"]
    linked: set[Path] = set()
    for page in docs:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in LINK.findall(text):
            path = target.partition("#")[0]
            if path and not re.match(r"^[a-z]+:", path):
                dest = (page.parent / path).resolve()
                if dest != page.resolve():
                    linked.add(dest)
    orphans = [p.name for p in docs if p.resolve() not in linked]
    assert orphans == [], f"no other page of docs/ links to {orphans}: link each where it belongs"
