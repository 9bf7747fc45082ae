"""The MCP edge: one tool registry, served over stdio or a loopback HTTP daemon.

Layout: ``models`` (typed inputs and outputs), ``handlers`` (one engine call each),
``registry`` (``TOOLS``: every tool declared once), ``server`` (``build_server``),
``http`` (the daemon), ``prompts``, ``docs`` (generates docs/tools.md) and ``agents``
(the same registry for in-process agents: ``tool_specs``, ``call_tool``...).

Importing this package imports nothing heavy: the MCP SDK is loaded only by ``server``.
"""
