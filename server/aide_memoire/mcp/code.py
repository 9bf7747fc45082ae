"""The code-index tools: index a source tree, search it, find a symbol.

They read files under the root the agent names (the user's own files, with the server's
permissions) and never reach the network; the index lives in the same store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, Field

from ..engine.code.models import CodeHit, CodeIndexReport, SymbolHit
from .models import ToolInput
from .spec import READ, WRITE, ToolSpec

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory

__all__ = ["TOOLS"]

Root = Annotated[
    str,
    Field(min_length=1, max_length=4096,
          description="Absolute path of the tree's root."),
]


class CodeIndexInput(ToolInput):
    root: Root


class CodeSearchInput(ToolInput):
    root: Root
    query: str = Field(min_length=1, max_length=2000,
                       description="What the code does or is called.")
    language: str | None = Field(default=None, min_length=1, max_length=40,
                                 description="Only this language, e.g. 'python'.")
    limit: int = Field(default=10, ge=1, le=100, description="Max chunks.")


class CodeSymbolInput(ToolInput):
    root: Root
    name: str = Field(min_length=1, max_length=200,
                      description="A function, class, method or variable name.")
    limit: int = Field(default=50, ge=1, le=200, description="Max places.")


class CodeSearchOutput(BaseModel):
    root: str
    hits: list[CodeHit] = Field(description="Best first, each with path and line range.")


class CodeSymbolOutput(BaseModel):
    root: str
    hits: list[SymbolHit] = Field(description="Definitions first, then references.")


def code_index(memory: Memory, args: CodeIndexInput, namespace: str) -> CodeIndexReport:
    return memory.code_index(args.root)


def code_search(memory: Memory, args: CodeSearchInput, namespace: str) -> CodeSearchOutput:
    hits = memory.code_search(args.root, args.query, language=args.language, limit=args.limit)
    return CodeSearchOutput(root=args.root, hits=hits)


def code_symbol(memory: Memory, args: CodeSymbolInput, namespace: str) -> CodeSymbolOutput:
    return CodeSymbolOutput(root=args.root,
                            hits=memory.code_symbol(args.root, args.name, limit=args.limit))


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="memory_code_index",
        title="Index a source tree",
        description=(
            "Build or refresh (incrementally) a source tree's index of chunks and symbols, "
            "honouring .gitignore; needed before memory_code_search or memory_code_symbol on it."
        ),
        input=CodeIndexInput,
        output=CodeIndexReport,
        handler=code_index,
        hints=WRITE,
        part="code",
    ),
    ToolSpec(
        name="memory_code_search",
        title="Search indexed code",
        description=(
            "The code chunks of an indexed tree most relevant to a description or identifiers (e.g."
            " 'retry with backoff'), best first, with path and lines; one name: memory_code_symbol."
        ),
        input=CodeSearchInput,
        output=CodeSearchOutput,
        handler=code_search,
        hints=READ,
        part="code",
    ),
    ToolSpec(
        name="memory_code_symbol",
        title="Find a symbol",
        description=(
            "Where a name (function, class, method, variable) is defined, then where it is used, in"
            " an indexed tree, with path, lines and a snippet; use it before changing a symbol."
        ),
        input=CodeSymbolInput,
        output=CodeSymbolOutput,
        handler=code_symbol,
        hints=READ,
        part="code",
    ),
)
