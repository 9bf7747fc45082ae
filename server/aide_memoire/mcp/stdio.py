"""The stdio transport, with an answer for every line a client sends.

The SDK's stdio reader drops a line it cannot parse as JSON-RPC: the client that sent
a request with a lone surrogate escape (``"\\ud800"``) or 3,000 nested objects waits
for an answer that never comes. JSON-RPC 2.0 says such a request gets an error
response (-32700 parse error, -32600 invalid request) with its id when the id can be
read, else null. Lines are checked here first; a bad one is answered at once and never
reaches the session. Good lines pass unchanged to the SDK's own reader.
"""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncIterator, Callable
from io import TextIOWrapper
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from ..logs import get_logger

__all__ = ["error_for", "run_on_lines", "serve_stdio"]

log = get_logger(__name__)

# The id of a request read without parsing the whole line (which is what failed):
# a top-level-looking "id" member holding a number or a short plain string.
_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"[A-Za-z0-9._:-]{1,64}")')
_JSON_PROBLEMS = ("json_invalid", "recursion_loop")


def error_for(line: str, exc: Exception) -> types.JSONRPCError:
    """The JSON-RPC error response to a line that is not a valid message."""
    kinds = {str(e.get("type")) for e in getattr(exc, "errors", lambda: [])()}
    parse = bool(kinds & set(_JSON_PROBLEMS)) or not kinds
    found = _ID.search(line[:4096])
    request_id: Any = None
    if found:
        raw = found.group(1)
        request_id = raw.strip('"') if raw.startswith('"') else int(raw)
    # The message names the problem, never echoes the input (it may be what was bad).
    message = (
        "parse error: the line is not JSON this server can read (a lone surrogate escape, "
        "nesting deeper than the parser allows, or broken syntax)"
        if parse else "invalid request: the JSON is not a JSON-RPC 2.0 message"
    )
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id,
        error=types.ErrorData(code=types.PARSE_ERROR if parse else types.INVALID_REQUEST,
                              message=message),
    )


class _CheckedLines:
    """stdin's lines, minus those that are not JSON-RPC (answered through ``errors``)."""

    def __init__(self, lines: Any, errors: Any) -> None:
        self.lines = lines
        self.errors = errors

    def __aiter__(self) -> AsyncIterator[str]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[str]:
        async for line in self.lines:
            if not line.strip():
                continue
            try:
                types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except Exception as exc:  # noqa: BLE001 - any failure to parse gets an answer
                log.warning("mcp_bad_line", error=type(exc).__name__)
                await self.errors.send(error_for(line, exc))
                continue
            yield line


class _Writer:
    """The SDK's stdout writer's side of ``write``: one call per answer line, in a worker
    thread (a client slow to read its pipe must not stall the event loop)."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write

    async def write(self, text: str) -> None:
        await anyio.to_thread.run_sync(self._write, text)

    async def flush(self) -> None:
        await anyio.lowlevel.checkpoint()


class _Iterable:
    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines


async def run_on_lines(server: Any, lines: AsyncIterator[str],
                       write: Callable[[str], None] | None = None) -> None:
    """Serve ``server`` (a low-level ``Server``) on ``lines`` read from a client, answering
    through ``write`` (each call one JSON-RPC line, newline included); without ``write``,
    on stdout as the SDK claims it (fd 1 then points at stderr, so stray output from a
    library cannot corrupt the wire)."""
    send_error, errors = anyio.create_memory_object_stream[types.JSONRPCError](16)
    checked: Any = _CheckedLines(_Iterable(lines), send_error)
    out: Any = None if write is None else _Writer(write)
    async with send_error, stdio_server(stdin=checked, stdout=out) as (read_stream,
                                                                       write_stream):

        async def answer_bad_lines() -> None:
            async with errors:
                async for error in errors:
                    await write_stream.send(SessionMessage(error))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(answer_bad_lines)
            await server.run(read_stream, write_stream, server.create_initialization_options())
            tasks.cancel_scope.cancel()


async def serve_stdio(server: Any) -> None:
    """Run ``server`` (a low-level ``Server``) over this process's stdin and stdout: on the
    stdio front's wire when cli/entry.py started one (it has answered the handshake and
    hands over every line it read, in order), else on the process's own streams."""
    from .front import active

    front = active()
    if front is not None:
        await run_on_lines(server, front.take_over(), front.write_line)
        return
    # Undecodable bytes become U+FFFD, as in the SDK's own reader.
    stdin_text = TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    lines = anyio.wrap_file(stdin_text)

    async def read_lines() -> AsyncIterator[str]:
        async for line in lines:
            yield line

    await run_on_lines(server, read_lines())
