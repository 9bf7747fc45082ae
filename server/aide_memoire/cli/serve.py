"""``aide-memoire serve``: the MCP server over stdio, or as a loopback HTTP daemon."""

from __future__ import annotations

import click

from ..engine.errors import AideMemoireError, InvalidInput
from ..engine.memory import Memory
from ..engine.settings import Settings
from .output import fail

__all__ = ["serve"]


@click.command()
@click.option("--http", "http", is_flag=True,
              help="Serve streamable HTTP on 127.0.0.1 (ephemeral port, bearer token) "
              "instead of stdio.")
@click.option("--namespace", "-n", default=None,
              help="Default namespace for tools (default: the project of $CLAUDE_PROJECT_DIR, "
              "else of the working directory: project:<folder>-<hash>).")
@click.option("--workers", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Engine calls running at once.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="With --http: the port (0 = any free port, announced in mcp-http.json).")
@click.pass_context
def serve(ctx: click.Context, http: bool, namespace: str | None, workers: int, port: int) -> None:
    """Run the MCP server (stdio by default) on the store."""
    from ..mcp.run import default_namespace, run_http, run_stdio
    from ..mcp.server import ServeSettings

    try:
        settings = ServeSettings(default_namespace=default_namespace(namespace), workers=workers)
        memory = Memory(settings=Settings.from_env(home=ctx.obj.get("home")))
    except InvalidInput as exc:
        fail(str(exc), 2)
    except AideMemoireError as exc:
        fail(str(exc), 1)
    with memory:
        if http:
            run_http(memory, settings, port=port)
        else:
            run_stdio(memory, settings)
