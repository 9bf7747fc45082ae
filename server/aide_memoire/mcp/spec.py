"""How one tool is declared: ``ToolSpec`` and the hint presets every family module uses.

A family module (``core``, ``trust``, ``lifecycle``, ``facts``, ``code``) declares its
tools the same way: typed input and output models, a handler ``(memory, args,
namespace) -> output`` and ``hints=`` one of the presets below; ``registry`` collects
the families. The handler receives the namespace already resolved (the argument, else
the server's default: see ``edge``), so no handler repeats that rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..engine.core import parts

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory
    from .models import ToolInput

__all__ = ["ACCUMULATE", "DESTRUCTIVE", "READ", "WRITE", "Handler", "Hints", "ToolSpec"]

# (memory, validated arguments, resolved namespace) -> the tool's output model.
Handler = Callable[["Memory", Any, str], BaseModel]


@dataclass(frozen=True)
class Hints:
    """The MCP annotations of a tool. Destructive and idempotent mean something only for
    a tool that writes (MCP), so a read-only tool publishes neither."""

    read_only: bool
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = False


READ = Hints(read_only=True)
# A write that the same call again leaves as it was (an exact store returns its id).
WRITE = Hints(read_only=False)
# A write whose every call counts again (feedback, consolidation).
ACCUMULATE = Hints(read_only=False, idempotent=False)
# A write that removes or replaces what was stored.
DESTRUCTIVE = Hints(read_only=False, destructive=True)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, its words for the agent, its types, its hints and its engine call."""

    name: str
    title: str
    description: str
    input: type[ToolInput]
    output: type[BaseModel]
    handler: Handler
    hints: Hints
    # Text content for the agent; None means the output as JSON.
    render: Callable[[Any], str] | None = None
    # The optional part (engine/core/parts.py) the tool needs; None = the base install.
    part: str | None = None

    @property
    def read_only(self) -> bool:
        return self.hints.read_only

    @property
    def destructive(self) -> bool:
        return self.hints.destructive

    @property
    def idempotent(self) -> bool:
        return self.hints.idempotent

    @property
    def open_world(self) -> bool:
        return self.hints.open_world

    @property
    def available(self) -> bool:
        """Whether this environment can run the tool (its part's extra is installed)."""
        return self.part is None or parts.available(self.part)
