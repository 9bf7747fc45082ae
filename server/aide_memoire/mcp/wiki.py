"""The wiki tool: lint a folder of Markdown pages (a wiki export, a project's docs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from ..engine.wiki.models import WikiLintReport
from .models import ToolInput
from .spec import READ, ToolSpec

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory

__all__ = ["TOOLS"]


class WikiLintInput(ToolInput):
    dir: str = Field(min_length=1, max_length=4096, description="The folder's path.")


def wiki_lint(memory: Memory, args: WikiLintInput, namespace: str) -> WikiLintReport:
    return memory.wiki_lint(args.dir, namespace=namespace)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="memory_wiki_lint",
        title="Lint wiki pages",
        description=(
            "Lint a folder of Markdown pages (a wiki export, docs): broken links, orphan "
            "pages, missing backlinks, facts without memory id or date, facts superseded "
            "since."
        ),
        input=WikiLintInput,
        output=WikiLintReport,
        handler=wiki_lint,
        hints=READ,
    ),
)
