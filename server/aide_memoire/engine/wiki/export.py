"""Writing the rendered pages into a folder: only what changed, and nothing else touched.

A page whose bytes are already on disk is not written (its mtime stays), so a second
export of an unchanged store rewrites nothing and a wiki kept in git shows no diff.
Pages of an earlier export of the same namespace that the store no longer backs (a
forgotten memory, an entity gone) are removed: a forgotten memory must not live on in
the wiki. Files the export did not make are never overwritten or removed; one in the
way of a page stops the export before anything is written.
"""

from __future__ import annotations

from pathlib import Path

from ..code.docs import front_matter
from ..core.errors import InvalidInput
from .models import WikiExportReport
from .names import safe_path, write_if_changed
from .pages import MARKER

__all__ = ["OWN_FOLDERS", "OWN_PAGES", "write_pages"]

OWN_FOLDERS = ("entities", "decisions")
OWN_PAGES = ("unfiled.md",)  # top-level pages that an export may no longer make


def _owner(path: Path) -> tuple[str, str] | None:
    """(page type, namespace) of a page this export made, else None."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fp:
            head = [next(fp, "").rstrip("\n") for _ in range(8)]
    except OSError:
        return None
    meta, _ = front_matter(head)
    kind = meta.get(MARKER)
    return (str(kind), str(meta.get("namespace", ""))) if kind else None


def write_pages(root: Path, namespace: str, pages: dict[str, str], *, entities: int,
                decisions: int, masked: bool) -> WikiExportReport:
    targets = {rel: safe_path(root, rel) for rel in pages}
    index = targets.get("index.md")
    if index is not None and index.exists():
        owner = _owner(index)
        if owner is None or owner[1] != namespace:
            held = f"the wiki of namespace {owner[1]!r}" if owner else "an index.md of its own"
            raise InvalidInput(
                f"{root} holds {held}; export each namespace to a folder of its own"
            )
    for path in targets.values():
        if path.exists() and _owner(path) is None:
            raise InvalidInput(
                f"{path} is in the way: it was not written by the wiki export, so it is "
                "left alone; move it or export to another folder"
            )
    written = [rel for rel, path in sorted(targets.items()) if write_if_changed(path, pages[rel])]
    removed: list[str] = []
    for rel in OWN_PAGES:
        path = safe_path(root, rel)
        if rel not in pages and path.is_file() and not path.is_symlink() \
                and (_owner(path) or ("", ""))[1] == namespace:
            path.unlink()
            removed.append(rel)
    for folder in OWN_FOLDERS:
        base = safe_path(root, folder)
        if not base.is_dir():
            continue
        for path in sorted(base.glob("*.md")):
            rel = f"{folder}/{path.name}"
            if rel in pages or path.is_symlink():
                continue
            owner = _owner(path)
            if owner is not None and owner[1] == namespace:
                path.unlink()
                removed.append(rel)
    return WikiExportReport(
        dir=str(root), namespace=namespace, pages=len(pages), entities=entities,
        decisions=decisions, written=written, unchanged=len(pages) - len(written),
        removed=removed, pii_masked=masked,
    )
