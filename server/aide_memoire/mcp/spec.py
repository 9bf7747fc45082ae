"""``ToolSpec``: how one tool is declared (see ``registry`` for the tools themselves)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..engine import parts

if TYPE_CHECKING:
    from ..engine.memory import Memory
    from .models import ToolInput

__all__ = ["Handler", "ToolSpec"]

Handler = Callable[["Memory", Any, str], BaseModel]


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, its words for the agent, its types, its hints and its engine call."""

    name: str
    title: str
    description: str
    input: type[ToolInput]
    output: type[BaseModel]
    handler: Handler
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool = False
    # Text content for the agent; None means the output as JSON.
    render: Callable[[Any], str] | None = None
    # The optional part (engine/parts.py) the tool needs; None = the base install.
    part: str | None = None

    @property
    def available(self) -> bool:
        """Whether this environment can run the tool (its part's extra is installed)."""
        return self.part is None or parts.available(self.part)
