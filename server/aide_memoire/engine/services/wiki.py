"""The wiki service: the memory exported as linked Markdown pages, and the pages' lint.

One engine method each for the two edges (CLI ``wiki export`` / ``wiki lint``, MCP
``memory_wiki_lint``). An export is audited like a JSON Lines export (``export`` event,
with ``reveal_pii``), and masks personal data the same way unless asked.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..core import validate as v
from ..trust.pii import mask_pii
from ..wiki.export import write_pages
from ..wiki.lint import lint_wiki
from ..wiki.models import WikiExportReport, WikiLintReport
from ..wiki.names import resolve_dir
from ..wiki.pages import collect, is_decision, render

if TYPE_CHECKING:
    from ..runtime.context import EngineContext

__all__ = ["WikiService"]


class WikiService:
    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx

    def export(
        self, folder: str | os.PathLike[str], *, namespace: str = "default",
        reveal_pii: bool = False,
    ) -> WikiExportReport:
        """Write ``namespace`` as pages into ``folder`` (created if missing); a page whose
        text is unchanged is not rewritten, pages no longer backed are removed."""
        namespace = v.validate_namespace(namespace)
        root = resolve_dir(folder, create=True)
        ctx = self.ctx

        def keep(text: str) -> str:
            return text

        with ctx.db.read() as conn:
            snap = collect(conn, ctx.store.page, namespace,
                           (lambda r: r) if reveal_pii else ctx.trust.masked,
                           keep if reveal_pii else mask_pii)
        with ctx.db.write() as tx:
            ctx.trust.record_export(tx, namespace, len(snap.memories), reveal_pii)
        pages = render(snap)
        decisions = sum(1 for r in snap.memories.values() if is_decision(r))
        return write_pages(root, namespace, pages, entities=len(snap.entities),
                           decisions=decisions, masked=not reveal_pii)

    def lint(
        self, folder: str | os.PathLike[str], *, namespace: str | None = None
    ) -> WikiLintReport:
        """Lint the pages in ``folder``; what they list as current is checked against the
        store (in ``namespace``, else each page's own ``namespace`` front matter)."""
        if namespace is not None:
            namespace = v.validate_namespace(namespace)
        self.ctx.db.conn()  # a closed store fails here, not half-way through the pages
        return lint_wiki(resolve_dir(folder, create=False), self._still_current, namespace)

    def _still_current(self, namespace: str, memory_id: str, predicate: str | None) -> str | None:
        try:
            namespace = v.validate_namespace(namespace)
        except Exception:  # a page's front matter is not to be trusted: skip, never fail
            return None
        conn = self.ctx.db.conn()
        if predicate is not None:
            rows = conn.execute(
                "SELECT valid_to, ended_by FROM facts WHERE namespace = ? AND memory_id = ? "
                "AND predicate = ?",
                (namespace, memory_id, predicate),
            ).fetchall()
            if any(end is None for end, _ in rows):
                return None
            by = next((str(b) for _, b in rows if b), None)
            if by:
                return f"the store closed this {predicate} fact: memory {by} superseded it"
            if rows:
                return f"the store closed this {predicate} fact"
            return (f"the store holds no {predicate} fact from memory {memory_id} any more "
                    "(forgotten or edited)")
        record = self.ctx.repos.rows.get(conn, memory_id, namespace)
        if record is None:
            return f"memory {memory_id} is no longer in the store (forgotten)"
        if record.superseded_by:
            return f"memory {memory_id} was superseded by memory {record.superseded_by}"
        if record.status != "active":
            return f"memory {memory_id} is now {record.status}"
        return None
