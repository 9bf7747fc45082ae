"""The MCP edge: one tool registry, served over stdio or a loopback HTTP daemon.

Layout: one module per tool family, all of one shape (``core``, ``trust``, ``code``,
``lifecycle``, ``facts``: input and output models, handlers, the family's ``TOOLS``),
``spec`` (``ToolSpec`` and the hint presets), ``models`` (the shared field types, from
engine/core/domain.py), ``registry`` (``TOOLS``: every family collected), ``edge`` (the one
adapter every call goes through: namespace, actor, error text), ``server``
(``build_server``, the SDK's low-level ``Server``), ``front`` and ``listing`` (the stdio
handshake answered before the SDK loads), ``stdio``, ``http`` (the daemon), ``run``,
``prompts``, ``docs`` (generates docs/tools.md) and ``agents`` (the same registry for
in-process agents: ``tool_specs``, ``call_tool``...).

Importing this package imports nothing heavy: the MCP SDK is loaded only by ``server``,
``stdio``, ``http`` and ``listing``.
"""
