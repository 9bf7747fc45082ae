"""``aide-memoire serve``: the MCP server over stdio, or as a loopback HTTP daemon.

A person who starts it at a terminal (``make serve``) sees one line on stderr saying
what is served and where the store is, then what the model preparation is doing; stdout
stays the stdio transport's.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from ..engine.core import parts
from ..engine.core.errors import AideMemoireError, InvalidInput, StoreError
from ..engine.core.settings import Settings
from ..mcp.edge import ServeSettings
from .output import EXIT_ERROR, EXIT_USAGE, fail

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory

__all__ = ["serve"]


def say(message: str) -> None:
    """One progress line on stderr (the model loads in a background thread)."""
    print(f"aide-memoire: {message}", file=sys.stderr, flush=True)


def _what(settings: Settings, namespace: str) -> str:
    from ..mcp.registry import TOOLS, available_tools

    served = available_tools()
    hidden = sorted({spec.part for spec in TOOLS if spec not in served and spec.part})
    off = "".join(f"; {parts.PARTS[p].what} off ({parts.PARTS[p].install})" for p in hidden)
    return (f"store {settings.db_path}, default namespace {namespace}, "
            f"{len(served)} tools{off}")


@click.command()
@click.option("--http", "http", is_flag=True,
              help="Serve streamable HTTP on 127.0.0.1 (this store's own port, bearer token) "
              "instead of stdio.")
@click.option("--namespace", "-n", default=None,
              help="Default namespace for tools (default: the project of $CLAUDE_PROJECT_DIR, "
              "else of the working directory: project:<folder>-<hash>).")
@click.option("--workers", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Engine calls running at once.")
@click.option("--allow-namespaces", "allow", default=None, envvar="AIDE_MEMOIRE_ALLOW_NAMESPACES",
              help="Pin the session to these namespaces (comma-separated, * and ? as "
              "wildcards, e.g. 'project:my-app,user:*'): every call naming another is refused "
              "and cross-namespace listings are cut to them. Default: any namespace.")
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="With --http: the port (default: this store's port, derived from its "
              "folder and recorded in <home>/mcp-http-port; 0 = any free port).")
@click.pass_context
def serve(ctx: click.Context, http: bool, namespace: str | None, workers: int,
          allow: str | None, port: int | None) -> None:
    """Run the MCP server (stdio by default) on the store."""
    from ..mcp.edge import LazyMemory
    from ..mcp.pins import parse_pin
    from ..mcp.run import default_namespace, run_stdio

    # A client (stdin not a terminal) may already have its handshake answered by the
    # stdio front: exiting now would show it an EOF. It gets a server whose every call
    # answers the problem instead; a person at a terminal gets the error and the exit.
    client = not sys.stdin.isatty()
    try:
        pin = parse_pin(allow)
        settings = ServeSettings(default_namespace=default_namespace(namespace), workers=workers,
                                 pin=pin)
        if pin is not None:
            pin.check(settings.default_namespace, tool="serve")
        store_settings = Settings.from_env(home=ctx.obj.get("home"))
    except AideMemoireError as exc:
        if http or not client:
            fail(str(exc), EXIT_USAGE if isinstance(exc, InvalidInput) else EXIT_ERROR)
        _serve_unusable(exc)
        return
    what = _what(store_settings, settings.default_namespace)
    if http:
        # The daemon opens the store at once: its hook route and web page need it.
        _serve_http(store_settings, settings, port, what)
        return
    waiting = ("; waiting for an MCP client on stdin (an MCP client starts this "
               "command itself; Ctrl-D stops)" if not client else "")
    say(f"serving MCP over stdio; {what}{waiting}")
    # Over stdio the store opens on the first tool call (or once the client's handshake is
    # done): initialize and tools/list never wait for the engine, the store or the model.
    # A folder that cannot hold the store is reported now, not at the first call (and
    # for a client, at every call until it is fixed).
    home_error = _check_home(store_settings, exit_on_error=not client)
    if home_error is not None:
        say(f"the store cannot open: {home_error}")
    memory = LazyMemory(lambda: _open_stdio(store_settings), where=_where(store_settings))
    try:
        run_stdio(memory, settings)
    finally:
        memory.close()


def _where(settings: Settings) -> str:
    """The setting that places the store, for the error a failed open answers with."""
    place = ("AIDE_MEMOIRE_DATABASE_URL" if settings.database_url is not None
             else f"AIDE_MEMOIRE_HOME or --home ({settings.db_path})")
    return f"the store is set by {place}; each call tries again, no restart needed"


def _serve_unusable(error: AideMemoireError) -> None:
    """Serve stdio with every call answering ``error`` (said on stderr first)."""
    from ..mcp.edge import LazyMemory
    from ..mcp.run import run_stdio

    say(f"serving MCP over stdio, but no tool call can run: {error}")
    fix = "restart the MCP server once it is fixed (reconnect it in the client)"
    run_stdio(LazyMemory.failed(error, where=fix), ServeSettings())


def _open_stdio(settings: Settings) -> Memory:
    error = _check_home(settings, exit_on_error=False)
    if error is not None:
        raise error
    return _open(settings)


def _check_home(settings: Settings, *, exit_on_error: bool = True) -> StoreError | None:
    from ..hooks.home import make_home

    home = settings.home
    try:
        make_home(home)
    except OSError as exc:
        error = StoreError(f"cannot create the store's folder {home}: {exc.strerror or exc}; "
                           "point AIDE_MEMOIRE_HOME or --home at a folder you can write")
        if exit_on_error:
            fail(str(error), EXIT_ERROR)
        return error
    return None


def _open(settings: Settings) -> Memory:
    from ..engine.facade.memory import Memory

    memory = Memory(settings=settings)
    memory.internals.embedder.progress = say
    return memory


def _serve_http(store_settings: Settings, settings: ServeSettings, port: int | None,
                what: str) -> None:
    from ..mcp.http import DaemonRunning, PortInUse, bind_daemon, hold_daemon_lock
    from ..mcp.run import run_http

    try:
        # Before the store opens: a second daemon for this home exits at once.
        lock = hold_daemon_lock(store_settings.home)
    except DaemonRunning as exc:
        fail(str(exc), EXIT_ERROR)
    except OSError as exc:
        fail(f"cannot take the daemon lock in {store_settings.home}: {exc}", EXIT_ERROR)
    try:
        memory = _open(store_settings)
    except AideMemoireError as exc:
        fail(str(exc), EXIT_ERROR)
    with memory:
        try:
            sock = bind_daemon(memory.settings.home, port)
        except PortInUse as exc:
            fail(str(exc), EXIT_ERROR)
        try:
            run_http(memory, settings, sock=sock, announce=f"; {what}")
        finally:
            os.close(lock)
