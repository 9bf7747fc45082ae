"""Running the server: the default namespace, and the stdio and HTTP entry points.

Cold start: ``initialize`` and ``tools/list`` need only the registry, so they are
answered at once. The embedding model starts loading in a background thread
(``Memory.warm``) once the client has listed the tools, or 3 s after start; a recall
that arrives before it is loaded waits for it, so its results are the same as any
later recall's (never keyword-only by accident).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ..engine.validate import normalize_namespace, validate_namespace

if TYPE_CHECKING:
    from ..engine.memory import Memory
    from .server import MemoryServer, ServeSettings

__all__ = ["default_namespace", "quiet_stdlib_logging", "run_http", "run_stdio"]


def default_namespace(
    explicit: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> str:
    """``explicit`` if given, else ``project:<folder>`` of the client's project directory
    (``CLAUDE_PROJECT_DIR``, else the working directory)."""
    if explicit:
        return validate_namespace(explicit)
    env = os.environ if environ is None else environ
    folder = Path(env.get("CLAUDE_PROJECT_DIR") or (cwd or Path.cwd()))
    return normalize_namespace(folder.name or "root", prefix="project:")


def quiet_stdlib_logging() -> None:
    """Send stdlib logging (the SDK's, uvicorn's) to stderr at WARNING, before the SDK
    would install its own rich handler: stdout belongs to the stdio transport."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.WARNING)


# Loading the model holds the GIL for seconds; starting it only once the client has
# listed the tools keeps the handshake fast. A tool call before then loads it anyway.
WARM_AFTER_S = 3.0


async def _warm(memory: Memory, server: MemoryServer) -> None:
    with anyio.move_on_after(WARM_AFTER_S):
        await server.tools_listed.wait()
    memory.warm()


async def _stdio(memory: Memory, settings: ServeSettings) -> None:
    from .server import build_server

    server = build_server(memory, settings)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_warm, memory, server)
        await server.run_stdio_async()
        tasks.cancel_scope.cancel()


async def _http(memory: Memory, settings: ServeSettings, port: int) -> None:
    from .http import serve_http
    from .server import build_server

    server = build_server(memory, settings)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_warm, memory, server)
        await serve_http(server, memory.settings.home, port=port, memory=memory)
        tasks.cancel_scope.cancel()


def run_stdio(memory: Memory, settings: ServeSettings) -> None:
    quiet_stdlib_logging()
    anyio.run(_stdio, memory, settings)


def run_http(memory: Memory, settings: ServeSettings, *, port: int = 0) -> Any:
    quiet_stdlib_logging()
    anyio.run(_http, memory, settings, port)
