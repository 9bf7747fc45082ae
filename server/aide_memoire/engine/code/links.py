"""Resolving the links of indexed prose pages against the index as it is now.

A Markdown or RST link is a path relative to its page (``/`` starts at the root); a
``[[wiki link]]`` names a page by its file name without extension, anywhere in the tree,
as Obsidian resolves it (the shortest path wins a tie). An anchor must be one of the
target page's heading slugs. A target that is no indexed file may still be a file of the
tree that is not indexed (an image): it is looked up on disk, never outside the root.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path

from ..storage.code import files as tables
from ..storage.protocol import Connection
from .docs import is_external, slug
from .models import DocLink, LinkStatus

__all__ = ["page_links", "resolve_target"]

_PAGE_SUFFIXES = (".md", ".markdown", ".rst")


def _pages(conn: Connection, root_id: int) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Anchors per indexed page path, and the shortest path per lower-cased file stem."""
    anchors: dict[str, list[str]] = {}
    stems: dict[str, str] = {}
    for path, raw in tables.page_anchors(conn, root_id):
        anchors[path] = list(json.loads(raw))
        stem = posixpath.splitext(posixpath.basename(path))[0].lower()
        stems.setdefault(stem, path)
    return anchors, stems


def resolve_target(
    page: str, target: str, style: str, root: Path, indexed: set[str],
    stems: dict[str, str],
) -> tuple[LinkStatus, str | None]:
    """Where a link of ``page`` leads among the ``indexed`` paths (or on disk)."""
    if is_external(target):
        return "external", None
    if not target:
        return "ok", page
    if style == "wiki":
        name = target.lower()
        for exact in (target, *(target + s for s in _PAGE_SUFFIXES)):
            if exact in indexed:
                return "ok", exact
        for candidate in (name, *(name + s for s in _PAGE_SUFFIXES)):  # any case (rare)
            hit = next((p for p in indexed if p.lower() == candidate), None)
            if hit:
                return "ok", hit
        stem = posixpath.splitext(posixpath.basename(name))[0] if name.endswith(
            _PAGE_SUFFIXES) else posixpath.basename(name)
        return ("ok", stems[stem]) if stem in stems else ("missing", None)
    base = "" if target.startswith("/") else posixpath.dirname(page)
    joined = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
    if joined == ".." or joined.startswith("../"):
        return "outside", None
    tries = [joined]
    if style.startswith("rst") or not posixpath.splitext(joined)[1]:
        tries += [joined + s for s in _PAGE_SUFFIXES]
    for candidate in tries:
        if candidate in indexed:
            return "ok", candidate
    for candidate in tries:  # a file the index leaves out (an image, a PDF) or a folder
        on_disk = root / candidate
        if on_disk.is_symlink() or on_disk.exists():
            return "ok", candidate
    return "missing", None


def page_links(conn: Connection, root_id: int, path: str | None) -> list[DocLink]:
    """Every link of the root's pages (or of the page at ``path``), resolved."""
    root = Path(tables.root_path(conn, root_id))
    anchors, stems = _pages(conn, root_id)
    indexed = tables.file_paths(conn, root_id)
    out: list[DocLink] = []
    for page, line, text, target, anchor, style in tables.page_links(conn, root_id, path):
        status: LinkStatus
        status, resolved = resolve_target(page, target, style, root, indexed, stems)
        if status == "ok" and anchor and resolved in anchors \
                and slug(anchor) not in anchors[resolved] and anchor not in anchors[resolved]:
            status = "missing_anchor"
        out.append(DocLink(path=page, line=line, text=text, target=target, anchor=anchor,
                           style=style, status=status, resolved=resolved))
    return out
