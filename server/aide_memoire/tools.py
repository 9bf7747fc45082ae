"""Memory tools for in-process agents (no MCP server): the MCP registry's tools as
OpenAI-style function specs, a dispatcher, framework registration and ``auto_recall``.

>>> from aide_memoire import Memory                                  # doctest: +SKIP
>>> from aide_memoire.tools import tool_specs, call_tool
>>> with Memory() as memory:
...     specs = tool_specs()           # pass to a chat-completions ``tools=`` argument
...     call_tool(memory, "memory_recall", '{"query": "deploy"}', namespace="project:x")
"""

from .mcp.agents import auto_recall, call_tool, register_tools, render_recall, tool_specs

__all__ = ["auto_recall", "call_tool", "register_tools", "render_recall", "tool_specs"]
