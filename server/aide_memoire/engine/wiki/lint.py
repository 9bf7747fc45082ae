"""The wiki lint: what is broken in a folder of Markdown pages, each problem found once.

- ``missing_target``: a link (``[[page]]``, ``[text](path)``) to no page or file, or to
  a heading the page does not have;
- ``orphan``: a page no other page links to (index pages - front matter
  ``aide-memoire: index``, or ``index.md`` / ``README.md`` at the top - are entry points);
- ``missing_backlink``: a page with a "Backlinks" section (the export's entity pages
  always have one) that does not list a page linking to it;
- ``no_provenance``: an item of a facts or memories section without the id of the memory
  it came from (``memory `ID```) or a source (``source: WHERE``), or without a date
  (``YYYY-MM-DD``);
- ``superseded``: with a store, an item listed as current whose fact the store has
  closed since (or whose memory was superseded or forgotten).

Links are resolved as the code index resolves them (code/links.py): relative paths, and
wiki links by path or by file name anywhere in the folder. The walk reads ``*.md``
files only, skips hidden folders and never follows a symbolic link.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..code.docs import all_links, front_matter, headings, is_external, prose_lines, slug
from ..code.links import resolve_target
from .models import PROBLEM_KINDS, WikiLintReport, WikiProblem
from .pages import BACKLINKS, CURRENT_FACTS, CURRENT_MEMORIES, FACT_SECTIONS, MARKER

__all__ = ["MAX_PAGE_BYTES", "Page", "StoreCheck", "lint_wiki", "read_pages"]

MAX_PAGE_BYTES = 2 * 1024 * 1024  # the code index's file limit (code/walk.py)
_MEMORY = re.compile(r"memory `([^`]+)`")
_SOURCE = re.compile(r"\bsource: \S+")  # a hand-written page may cite a source instead
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_FACT = re.compile(r"^- \*\*([^*]+)\*\*:")
_ITEM = re.compile(r"^\s*[-*+] ")

# (namespace, memory id, predicate or None for the memory itself) -> why it is no longer
# current, or None while it holds.
StoreCheck = Callable[[str, str, str | None], str | None]


@dataclass
class Page:
    rel: str
    lines: list[str]
    meta: dict[str, object]
    body_start: int
    anchors: set[str] = field(default_factory=set)
    # (heading text, first line index, end line index)
    sections: list[tuple[str, int, int]] = field(default_factory=list)

    @property
    def is_index(self) -> bool:
        return self.meta.get(MARKER) == "index" or self.rel.lower() in ("index.md", "readme.md")

    def section(self, name: str) -> tuple[int, int] | None:
        return next(((a, b) for h, a, b in self.sections if h.lower() == name.lower()), None)


def read_pages(root: Path) -> tuple[list[Page], set[str]]:
    """The Markdown pages under ``root`` and every file's relative path (link targets)."""
    pages: list[Page] = []
    files: set[str] = set()
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(names):
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink() or name.startswith("."):
                continue
            files.add(rel)
            if not name.lower().endswith(".md") or path.stat().st_size > MAX_PAGE_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            lines = text.split("\n")
            meta, start = front_matter(lines)
            heads = headings(lines, "markdown", start)
            page = Page(rel, lines, meta, start, {slug(h) for _, _, h in heads})
            for n, (at, _, heading) in enumerate(heads):
                end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
                page.sections.append((heading, at + 1, end))
            pages.append(page)
    return pages, files


def _stems(pages: list[Page]) -> dict[str, str]:
    stems: dict[str, str] = {}
    for page in sorted(pages, key=lambda p: (len(p.rel), p.rel)):
        stems.setdefault(page.rel.rsplit("/", 1)[-1][:-3].lower(), page.rel)
    return stems


def lint_wiki(root: Path, check: StoreCheck | None = None,
              namespace: str | None = None) -> WikiLintReport:
    """Lint the pages under ``root``; ``check`` asks the store whether what a page lists
    as current still is, in the page's own namespace (front matter); with ``namespace``
    only pages of that namespace (or of none) are checked."""
    pages, files = read_pages(root)
    by_rel = {p.rel: p for p in pages}
    stems = _stems(pages)
    problems: list[WikiProblem] = []
    inbound: dict[str, set[str]] = {p.rel: set() for p in pages}
    # Links that expect a backlink: not those inside a Backlinks section themselves.
    expecting: dict[str, set[str]] = {p.rel: set() for p in pages}
    for page in pages:
        own = page.section(BACKLINKS) or (0, 0)
        for link in all_links(page.lines, "markdown", page.body_start):
            number = link.line
            if is_external(link.target):
                continue
            status, target = resolve_target(
                page.rel, link.target, link.style, root, files, stems)
            shown = link.target + (f"#{link.anchor}" if link.anchor else "")
            if status != "ok" or target is None:
                where = "a place outside this folder" if status == "outside" else \
                    "no page or file here"
                problems.append(WikiProblem(
                    kind="missing_target", page=page.rel, line=number, target=shown,
                    message=f"links to {shown!r}, which is {where}",
                ))
                continue
            found = by_rel.get(target)
            if found is not None and link.anchor and slug(link.anchor) not in found.anchors:
                problems.append(WikiProblem(
                    kind="missing_target", page=page.rel, line=number, target=shown,
                    message=f"{target} has no heading {link.anchor!r}",
                ))
            elif found is not None and target != page.rel:
                inbound[target].add(page.rel)
                if not own[0] <= number - 1 < own[1]:
                    expecting[target].add(page.rel)
    for page in pages:
        problems += _page_problems(page, inbound[page.rel], expecting[page.rel], by_rel, stems,
                                   root, files, check, namespace)
    problems.sort(key=lambda p: (p.page, p.line, PROBLEM_KINDS.index(p.kind), p.target))
    return WikiLintReport(pages=len(pages), ok=not problems, problems=problems)


def _listed(page: Page, span: tuple[int, int], root: Path, files: set[str],
            stems: dict[str, str]) -> set[str]:
    """The pages linked from lines ``span`` of ``page``."""
    out: set[str] = set()
    for link in all_links(page.lines[: span[1]], "markdown", span[0]):
        status, target = resolve_target(page.rel, link.target, link.style, root, files,
                                        stems)
        if status == "ok" and target:
            out.add(target)
    return out


def _page_problems(
    page: Page, inbound: set[str], expecting: set[str], by_rel: dict[str, Page],
    stems: dict[str, str],
    root: Path, files: set[str], check: StoreCheck | None, namespace: str | None,
) -> list[WikiProblem]:
    out: list[WikiProblem] = []
    if not inbound and not page.is_index:
        out.append(WikiProblem(kind="orphan", page=page.rel, line=0,
                               message="no other page links here; link it from the index"))
    span = page.section(BACKLINKS)
    if span is not None:
        listed = _listed(page, span, root, files, stems)
        for source in sorted(expecting - listed):
            if by_rel[source].is_index:
                continue  # the index links every page; it is no backlink worth listing
            out.append(WikiProblem(
                kind="missing_backlink", page=page.rel, line=span[0], target=source,
                message=f"{source} links here but the {BACKLINKS} section does not list it",
            ))
    # A page of another namespace than the one asked for is not checked: the caller may
    # be scoped to its namespace (an MCP server), and must not probe another.
    own_ns = str(page.meta.get("namespace") or "")
    scope = "" if namespace and own_ns and own_ns != namespace else (own_ns or namespace or "")
    for heading in FACT_SECTIONS:
        where = page.section(heading)
        if where is None:
            continue
        for index in prose_lines(page.lines[: where[1]], where[0]):
            line = page.lines[index]
            if not _ITEM.match(line) or line.strip() == "- none":
                continue
            memory = _MEMORY.search(line)
            cited = memory is not None or _SOURCE.search(line) is not None
            if not cited or _DATE.search(line) is None:
                lack = "the id of the memory it came from (or a source)" if not cited \
                    else "a date"
                out.append(WikiProblem(kind="no_provenance", page=page.rel, line=index + 1,
                                       message=f"{heading} item without {lack}"))
                continue
            if memory is None or check is None or not scope \
                    or heading not in (CURRENT_FACTS, CURRENT_MEMORIES):
                continue
            fact = _FACT.match(line)
            predicate = fact.group(1) if heading == CURRENT_FACTS and fact else None
            why = check(scope, memory.group(1), predicate)
            if why:
                out.append(WikiProblem(kind="superseded", page=page.rel, line=index + 1,
                                       target=memory.group(1), message=why))
    return out
