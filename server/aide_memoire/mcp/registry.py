"""Every MCP tool, collected from the family modules. The server, the stdio front's
listing, docs/tools.md and the tests read ``TOOLS``.

Each family module (``core``, ``trust``, ``code``, ``lifecycle``, ``facts``, ``wiki``) declares its
tools in the same shape (see ``spec``); nothing registers itself by being imported.
A tool's description is the prompt an agent reads to decide whether to call it: it says
when to use the tool, when not to, and what comes back.
"""

from __future__ import annotations

from . import code, core, facts, hooks, lifecycle, trust, wiki
from .spec import ToolSpec

__all__ = ["TOOLS", "UNLISTED", "ToolSpec", "available_tools", "tool_by_name"]

TOOLS: tuple[ToolSpec, ...] = (
    *core.TOOLS,
    *trust.TOOLS,
    *code.TOOLS,
    *lifecycle.TOOLS,
    *facts.TOOLS,
    *wiki.TOOLS,
)

# Callable by name, never in tools/list: the tools Claude Code's mcp_tool hooks call (not
# for the model, and no tools/list bytes spent on them; mcp/hooks.py).
UNLISTED: tuple[ToolSpec, ...] = hooks.UNLISTED


def available_tools() -> tuple[ToolSpec, ...]:
    """The tools this environment can run: a tool whose extra is missing is not published
    (an agent must never see a tool that can only fail)."""
    return tuple(spec for spec in TOOLS if spec.available)


def tool_by_name(name: str) -> ToolSpec | None:
    return next((spec for spec in TOOLS if spec.name == name), None)
