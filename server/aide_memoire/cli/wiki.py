"""``aide-memoire wiki export`` and ``wiki lint``: the memory as linked Markdown pages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..engine.wiki.models import WikiExportReport, WikiLintReport
from .output import emit

__all__ = ["register"]

EXIT_PROBLEMS = 1


def _export_text(report: WikiExportReport) -> str:
    lines = [
        f"exported namespace {report.namespace} to {report.dir}: {report.pages} pages "
        f"({report.entities} entities, {report.decisions} decisions or pinned)",
        f"written {len(report.written)}, unchanged {report.unchanged}, "
        f"removed {len(report.removed)}"
        + ("" if report.pii_masked else " (personal data NOT masked)"),
    ]
    lines += [f"  + {rel}" for rel in report.written]
    lines += [f"  - {rel}" for rel in report.removed]
    return "\n".join(lines)


def lint_text(report: WikiLintReport) -> str:
    lines = [f"{p.page}:{p.line}  {p.kind}  {p.message}" for p in report.problems]
    if report.ok:
        lines.append(f"{report.pages} pages, no problems")
    else:
        counts = ", ".join(f"{kind} {n}" for kind, n in report.counts().items())
        lines.append(f"{report.pages} pages, {len(report.problems)} problems ({counts})")
    return "\n".join(lines)


def register(cli: click.Group, open_memory: Callable[[click.Context], Any]) -> None:
    """Add the ``wiki`` group to the ``aide-memoire`` group."""

    @cli.group()
    def wiki() -> None:
        """The memory as linked Markdown pages (Obsidian-compatible), and their lint."""

    @wiki.command(name="export")
    @click.argument("folder", type=click.Path(file_okay=False, path_type=str))
    @click.option("--namespace", "-n", default="default", show_default=True,
                  help="Namespace to export (one folder per namespace).")
    @click.option("--reveal-pii", is_flag=True, help="Keep personal data unmasked in the pages.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def export(ctx: click.Context, folder: str, namespace: str, reveal_pii: bool,
               as_json: bool) -> None:
        """Write one page per entity, per decision or pinned memory, and an index into
        FOLDER; a page whose text is unchanged is not rewritten."""
        with open_memory(ctx) as memory:
            report = memory.wiki_export(folder, namespace=namespace, reveal_pii=reveal_pii)
        emit(report, as_json=as_json, text=_export_text(report))

    @wiki.command(name="lint")
    @click.argument("folder", type=click.Path(file_okay=False, path_type=str))
    @click.option("--namespace", "-n", default=None,
                  help="Check current facts in this namespace (default: each page's own).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def lint(ctx: click.Context, folder: str, namespace: str | None, as_json: bool) -> None:
        """Broken links, orphan pages, missing backlinks, facts without provenance and
        facts the store has superseded since the export. Exits 1 when a problem is found."""
        with open_memory(ctx) as memory:
            report = memory.wiki_lint(folder, namespace=namespace)
        emit({"dir": folder, "counts": report.counts(), **report.model_dump()},
             as_json=as_json, text=lint_text(report))
        if not report.ok:
            ctx.exit(EXIT_PROBLEMS)
