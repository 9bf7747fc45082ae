"""Typed results of the wiki export and lint; the CLI prints them and MCP returns them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PROBLEM_KINDS", "ProblemKind", "WikiExportReport", "WikiLintReport", "WikiProblem"]

ProblemKind = Literal["missing_target", "orphan", "missing_backlink", "no_provenance",
                      "superseded"]
PROBLEM_KINDS: tuple[ProblemKind, ...] = (
    "missing_target", "orphan", "missing_backlink", "no_provenance", "superseded",
)


class WikiExportReport(BaseModel):
    """What one ``wiki export`` did."""

    dir: str = Field(description="The folder written, as a resolved absolute path.")
    namespace: str
    pages: int = Field(description="Pages of the export (entities, decisions, the index).")
    entities: int
    decisions: int = Field(description="Decision or pinned memories, one page each.")
    written: list[str] = Field(default_factory=list,
                               description="Pages created or changed (relative paths).")
    unchanged: int = Field(description="Pages whose text was already the same (not touched).")
    removed: list[str] = Field(default_factory=list,
                               description="Pages of an earlier export no longer in the store.")
    pii_masked: bool = Field(description="Whether personal data was masked.")


class WikiProblem(BaseModel):
    """One thing the lint found broken."""

    model_config = ConfigDict(frozen=True)

    kind: ProblemKind
    page: str = Field(description="The page to fix, relative to the folder.")
    line: int = Field(description="1-based line; 0 for the page as a whole.")
    target: str = Field(default="", description="The link, page or memory concerned.")
    message: str


class WikiLintReport(BaseModel):
    """The lint of a folder of pages; ``ok`` when nothing is broken. (Kept to three
    fields: it is the output schema of an MCP tool, paid for in every tools/list.)"""

    pages: int
    ok: bool
    problems: list[WikiProblem] = Field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Problems per kind, in the order of ``PROBLEM_KINDS``, kinds found only."""
        found = {kind: sum(1 for p in self.problems if p.kind == kind) for kind in PROBLEM_KINDS}
        return {kind: n for kind, n in found.items() if n}
