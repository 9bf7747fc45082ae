"""Running the server: the default namespace, and the stdio and HTTP entry points.

Cold start: ``initialize`` and ``tools/list`` need only the registry, so they are
answered at once (over stdio, by ``front`` even before the SDK has loaded). The store
is opened on the first tool call, or by the warm-up: once the client has listed the
tools, or 3 s after start, the store opens and the embedding model starts loading in a
background thread (``Memory.warm``); a recall that arrives before it is loaded waits
for it, so its results are the same as any later recall's (never keyword-only by
accident). Once the store is open, the stdio server also tells a client whose early
resources/list the front answered that the list changed (when the store holds
namespaces), and gives rows stored keyword-only their vectors in the background, as the
HTTP daemon does.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ..engine.core.errors import AideMemoireError
from ..engine.core.projects import directory_from, project_namespace
from ..engine.core.validate import validate_namespace

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory
    from .edge import LazyMemory, ServeSettings
    from .server import MemoryServer

__all__ = ["default_namespace", "quiet_stdlib_logging", "run_http", "run_stdio"]


def default_namespace(
    explicit: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> str:
    """``explicit`` if given, else the namespace of the client's project (``CLAUDE_PROJECT_DIR``,
    else the working directory): see engine/core/projects.py."""
    if explicit:
        return validate_namespace(explicit)
    env = os.environ if environ is None else environ
    return project_namespace(directory_from(env, cwd))


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


async def _warm(server: MemoryServer) -> Memory | None:
    """Open the store and start the model loading; the store, or None if it did not open."""
    with anyio.move_on_after(WARM_AFTER_S):
        await server.tools_listed.wait()
    # Opening the store (migrations on a first run) is blocking work: off the event loop.
    # A failure here must never end the session (an exception in this task would cancel
    # the server's task group: the client would see EOF). A store that did not open was
    # logged by LazyMemory, and each tool call answers with its reason.
    try:
        memory = await anyio.to_thread.run_sync(server.get_memory)
    except AideMemoireError:
        return None
    try:
        memory.warm()
    except Exception as exc:  # noqa: BLE001 - a recall loads the model itself, or says why
        logging.getLogger(__name__).warning("warming the model failed: %s", exc)
    return memory


# Without a daemon, hook processes capture turns keyword-only while the session runs;
# the stdio server gives them vectors on this period (a pass with nothing to do is one
# count query), so they rank by meaning within minutes, not only after a daemon runs.
CATCH_UP_EVERY_S = 300.0


async def _warm_and_catch_up(server: MemoryServer) -> None:
    """The warm-up, then the vector catch-up on one daemon thread: it starts only once
    the store is open (never before the first answer), encodes a batch at a time (one
    short write each, resumable) and repeats every CATCH_UP_EVERY_S."""
    memory = await _warm(server)
    if memory is None:
        return
    await _announce_resources(server, memory)

    def catch_up() -> None:
        while True:
            _catch_up_vectors(memory)
            time.sleep(CATCH_UP_EVERY_S)

    threading.Thread(target=catch_up, name="catch-up", daemon=True).start()


async def _stdio(memory: Memory | LazyMemory, settings: ServeSettings) -> None:
    from .server import build_server
    from .stdio import serve_stdio

    server = build_server(memory, settings)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_warm_and_catch_up, server)
        await serve_stdio(server)
        tasks.cancel_scope.cancel()


async def _announce_resources(server: MemoryServer, memory: Memory) -> None:
    """The stdio front answered an early resources/list with the status resource only
    (it runs before the store opens): if the store holds namespaces the session may see,
    tell the client to list again (the server declares resources.listChanged)."""
    from .front import active

    front = active()
    if front is None or "resources/list" not in front.early:
        return
    try:
        status = await anyio.to_thread.run_sync(memory.status)
    except Exception as exc:  # noqa: BLE001 - in the server's task group: must not end it
        logging.getLogger(__name__).warning("listing the namespaces failed: %s", exc)
        return
    pin = server.serve_settings.pin
    if not any(pin is None or pin.allows(n) for n in status.namespaces):
        return  # the early list was the whole list
    ready = await anyio.to_thread.run_sync(front.client_ready.wait, 10.0,
                                           abandon_on_cancel=True)
    if ready:
        with contextlib.suppress(OSError, ValueError):  # the client left meanwhile
            front.notify("notifications/resources/list_changed")


# Rows encoded per write: a recall that queues behind the catch-up waits for one batch
# (~0.3 s at ~200 turns/s on 2 cores), not the whole backlog.
CATCH_UP_BATCH = 64


def _catch_up_vectors(memory: Memory) -> None:
    """Encode the rows stored keyword-only meanwhile (hooks capture without the model
    when no daemon runs); resumable, so a daemon stopped half-way loses nothing."""
    try:
        if memory.internals.recaller.dense_live() and memory.internals.embedder.wait():
            memory.reembed(batch=CATCH_UP_BATCH)
    except Exception as exc:  # noqa: BLE001 - a background catch-up must not stop serving
        logging.getLogger(__name__).warning("reembed after start failed: %s", exc)


async def _http(memory: Memory, settings: ServeSettings, sock: socket.socket | None,
                port: int, announce: str) -> None:
    from .http import serve_http
    from .server import build_server

    server = build_server(memory, settings)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_warm, server)
        threading.Thread(target=_catch_up_vectors, args=(memory,), name="catch-up",
                         daemon=True).start()
        await serve_http(server, memory.settings.home, sock=sock, port=port, announce=announce,
                         memory=memory, idle_s=memory.settings.daemon_idle_s)
        tasks.cancel_scope.cancel()


def run_stdio(memory: Memory | LazyMemory, settings: ServeSettings) -> None:
    quiet_stdlib_logging()
    anyio.run(_stdio, memory, settings)


def run_http(memory: Memory, settings: ServeSettings, *, port: int = 0,
             sock: socket.socket | None = None, announce: str = "") -> Any:
    """Serve HTTP on ``sock`` (see ``http.bind_daemon``), else on a new socket on ``port``."""
    quiet_stdlib_logging()
    anyio.run(_http, memory, settings, sock, port, announce)
