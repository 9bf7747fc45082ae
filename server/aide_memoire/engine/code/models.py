"""Typed results of the code index; the CLI prints them and MCP tools return them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

__all__ = ["CodeHit", "CodeIndexReport", "DocLink", "LinkStatus", "SkippedFile", "SymbolHit"]


class SkippedFile(BaseModel):
    """A file or folder the indexer left out, and why."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(description="Path relative to the indexed root.")
    reason: str = Field(description="Why it was skipped (oversized, binary, not UTF-8, ...).")


class CodeIndexReport(BaseModel):
    """What one run of ``code_index`` did."""

    root: str = Field(description="The indexed root, as a resolved absolute path.")
    files: int = Field(description="Files in the index after this run.")
    indexed: int = Field(description="Files read and parsed in this run (new or changed).")
    unchanged: int = Field(description="Files whose size and mtime, or content hash, matched.")
    removed: int = Field(description="Files dropped because they were deleted or are now ignored.")
    chunks: int = Field(description="Chunks in the index after this run.")
    symbols: int = Field(description="Symbols in the index after this run.")
    lines: int = Field(description="Lines of the files read in this run.")
    languages: dict[str, int] = Field(
        default_factory=dict, description="Files per language in the index."
    )
    parsers: dict[str, str] = Field(
        default_factory=dict,
        description="Per language: 'tree-sitter' or 'lines' (line windows, no grammar).",
    )
    skipped: list[SkippedFile] = Field(default_factory=list)
    redacted: list[SkippedFile] = Field(
        default_factory=list,
        description="Files indexed with secret spans replaced by [redacted:<rule>].",
    )
    seconds: float = Field(description="Wall-clock time of the run.")


class CodeHit(BaseModel):
    """One chunk of code that matches a search, best first."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(description="File path relative to the root.")
    start_line: int = Field(description="First line of the chunk (1-based).")
    end_line: int = Field(description="Last line of the chunk (inclusive).")
    language: str
    kind: str = Field(description="function, method, class, ... or 'lines' for a line window.")
    name: str | None = Field(default=None, description="Qualified name of the chunk's symbol.")
    signature: str = ""
    snippet: str = Field(description="The first lines of the chunk.")
    score: float = Field(description="Final score; higher is better, comparable within one call.")
    scores: dict[str, float] = Field(default_factory=dict)
    ranks: dict[str, int] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


class SymbolHit(BaseModel):
    """A definition of a symbol, or a chunk that refers to it."""

    model_config = ConfigDict(frozen=True)

    role: Literal["definition", "reference"]
    name: str
    qualified_name: str | None = Field(
        default=None, description="For a definition: Class.method style name."
    )
    kind: str = Field(description="Definition kind; for a reference, the kind of its chunk.")
    path: str
    start_line: int
    end_line: int
    line: int = Field(description="The definition's line, or the first line naming the symbol.")
    language: str
    signature: str = ""
    snippet: str = ""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


LinkStatus = Literal["ok", "missing", "missing_anchor", "external", "outside"]


class DocLink(BaseModel):
    """A link in an indexed prose page, resolved against the index as it is now."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(description="The page holding the link, relative to the root.")
    line: int
    text: str
    target: str = Field(description="The target as written (without its #anchor).")
    anchor: str = ""
    style: str = Field(description="markdown, reference, wiki ([[...]]), rst or rst-doc.")
    status: LinkStatus = Field(
        description="ok; missing (no such file or page); missing_anchor (the page has no "
        "such heading); external (a URL, not checked); outside (leaves the root)."
    )
    resolved: str | None = Field(default=None, description="The target's path when found.")
