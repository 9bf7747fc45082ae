"""``aide-memoire code-index``, ``code-search``, ``code-symbol``: the code index from a shell."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from ..engine.code.models import CodeHit, CodeIndexReport, DocLink, SymbolHit
from ..engine.code.search import KINDS
from .output import emit, needs_part, why

__all__ = ["register"]


class _Bar:
    """A progress bar on stderr, shown only on a terminal and never with --json."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.bar: Any = None

    def __call__(self, done: int, total: int, path: str) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            self.bar = click.progressbar(
                length=total, label="indexing", file=sys.stderr, show_pos=True, width=30
            )
            self.bar.__enter__()
        self.bar.update(done - self.bar.pos)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def _report_text(report: CodeIndexReport) -> str:
    langs = ", ".join(f"{lang} {n}" for lang, n in sorted(report.languages.items()))
    lines = [
        f"indexed {report.root} in {report.seconds:.2f} s",
        f"files     {report.files} ({report.indexed} read, {report.unchanged} unchanged, "
        f"{report.removed} removed)",
        f"chunks    {report.chunks}, symbols {report.symbols}",
        f"languages {langs or '-'}",
    ]
    fallback = sorted(lang for lang, p in report.parsers.items() if p == "lines")
    if fallback:
        lines.append(f"line windows (no grammar): {', '.join(fallback)}")
    if report.skipped:
        lines.append(f"skipped   {len(report.skipped)}:")
        lines += [f"  {s.path}: {s.reason}" for s in report.skipped]
    return "\n".join(lines)


def _hit_text(rank: int, hit: CodeHit) -> str:
    name = f"  {hit.kind} {hit.name}" if hit.name else f"  {hit.kind}"
    head = f"{rank:>3}. {hit.location}{name}  ({hit.language}, {why(hit.ranks)})"
    body = "\n".join("     " + line for line in hit.snippet.split("\n"))
    return f"{head}\n{body}"


def _symbol_text(hit: SymbolHit) -> str:
    if hit.role == "definition":
        return f"def  {hit.path}:{hit.line}-{hit.end_line}  {hit.kind} {hit.qualified_name}" + (
            f"\n     {hit.signature}" if hit.signature else ""
        )
    return f"ref  {hit.path}:{hit.line}  {hit.snippet}"


_BROKEN = ("missing", "missing_anchor", "outside")


def _link_text(link: DocLink) -> str:
    target = link.target + (f"#{link.anchor}" if link.anchor else "")
    where = f" -> {link.resolved}" if link.resolved and link.status == "ok" else ""
    return f"{link.path}:{link.line}  {link.status:<14} {target}{where}"


def register(cli: click.Group, open_memory: Callable[[click.Context], Any]) -> None:
    """Add the code commands to the ``aide-memoire`` group."""

    @cli.command(name="code-index")
    @click.argument("root", type=click.Path(path_type=str))
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def code_index(ctx: click.Context, root: str, as_json: bool) -> None:
        """Index the source tree at ROOT (again: only changed files are re-read).

        Needs the 'code' extra: pip install 'aide-memoire[code]'.
        """
        needs_part("code")
        bar = _Bar(enabled=not as_json)
        try:
            with open_memory(ctx) as memory:
                report = memory.code_index(root, progress=bar)
        finally:
            bar.close()
        emit(report, as_json=as_json, text=_report_text(report))

    @cli.command(name="code-search")
    @click.argument("root", type=click.Path(path_type=str))
    @click.argument("query")
    @click.option("--language", default=None, help="Only chunks of this language (e.g. python).")
    @click.option("--kind", type=click.Choice(KINDS), default=None,
                  help="Only source code, or only prose pages (Markdown, RST) by section.")
    @click.option("--limit", type=int, default=10, show_default=True, help="How many hits.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def code_search(
        ctx: click.Context, root: str, query: str, language: str | None, kind: str | None,
        limit: int, as_json: bool,
    ) -> None:
        """Search the index of ROOT for code relevant to QUERY, best first.

        Needs the 'code' extra: pip install 'aide-memoire[code]'.
        """
        needs_part("code")
        with open_memory(ctx) as memory:
            hits = memory.code_search(root, query, language=language, limit=limit, kind=kind)
        text = "\n".join(_hit_text(i, h) for i, h in enumerate(hits, 1)) or "no code found"
        emit({"root": root, "query": query, "hits": hits}, as_json=as_json, text=text)

    @cli.command(name="code-symbol")
    @click.argument("root", type=click.Path(path_type=str))
    @click.argument("name")
    @click.option("--limit", type=int, default=50, show_default=True, help="How many results.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def code_symbol(ctx: click.Context, root: str, name: str, limit: int, as_json: bool) -> None:
        """Where NAME is defined in ROOT's index, then where it is used.

        Needs the 'code' extra: pip install 'aide-memoire[code]'.
        """
        needs_part("code")
        with open_memory(ctx) as memory:
            hits = memory.code_symbol(root, name, limit=limit)
        text = "\n".join(_symbol_text(h) for h in hits) or f"no symbol {name!r} found"
        emit({"root": root, "name": name, "results": hits}, as_json=as_json, text=text)

    @cli.command(name="code-links")
    @click.argument("root", type=click.Path(path_type=str))
    @click.option("--path", default=None, help="Only the links of this page (relative path).")
    @click.option("--broken", is_flag=True, help="Only links whose target or anchor is missing.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def code_links(
        ctx: click.Context, root: str, path: str | None, broken: bool, as_json: bool
    ) -> None:
        """The links of ROOT's indexed Markdown and RST pages, each resolved.

        Exits 1 when --broken is given and a link is broken. Needs the 'code' extra.
        """
        needs_part("code")
        with open_memory(ctx) as memory:
            links = memory.code_links(root, path=path)
        if broken:
            links = [ln for ln in links if ln.status in _BROKEN]
        text = "\n".join(_link_text(ln) for ln in links) or "no links"
        emit({"root": root, "links": links}, as_json=as_json, text=text)
        if broken and links:
            ctx.exit(1)
