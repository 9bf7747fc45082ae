"""``aide-memoire project``: which namespace a folder uses, and adopting the old one.

The SessionStart hook adopts by itself only when that is safe (engine/ops/adopt.py
``auto_adopt``); otherwise two checkouts once shared the old namespace, only the person
knows whose memories they were, and ``aide-memoire project adopt`` moves them on request.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

__all__ = ["register"]


def register(cli: click.Group, open_memory: Any) -> None:
    @cli.group()
    def project() -> None:
        """This folder's project namespace, and adopting an older one."""

    @project.command(name="show")
    @click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
                  default=None, help="Project folder (default: $CLAUDE_PROJECT_DIR, else here).")
    @click.pass_context
    def show(ctx: click.Context, directory: Path | None) -> None:
        """Print the project's root, namespace and whether capture is on."""
        from ..engine.core.projects import directory_from, project_for
        from ..hooks.capture import capture_enabled

        found = project_for(directory or directory_from(os.environ, None))
        with open_memory(ctx) as memory:
            on, why = capture_enabled(memory.settings, found.root)
        click.echo(f"root       {found.root} ({'git' if found.git else 'folder'})")
        click.echo(f"namespace  {found.namespace}")
        click.echo(f"older name {found.legacy}")
        click.echo(f"capture    {why}")

    @project.command(name="adopt")
    @click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
                  default=None, help="Project folder (default: $CLAUDE_PROJECT_DIR, else here).")
    @click.option("--from", "source", default=None,
                  help="Namespace to adopt (default: the older project:<folder> name).")
    @click.option("--dry-run", is_flag=True, help="Say what would move; change nothing.")
    @click.pass_context
    def adopt(ctx: click.Context, directory: Path | None, source: str | None,
              dry_run: bool) -> None:
        """Move the memories of an older namespace into this project's namespace."""
        from ..engine.core.projects import directory_from, project_for
        from ..engine.core.validate import validate_namespace
        from ..engine.ops.adopt import adopt_namespace
        from .output import fail

        found = project_for(directory or directory_from(os.environ, None))
        with open_memory(ctx) as memory:
            old = validate_namespace(source or found.legacy)
            if old == found.namespace:
                fail("that is already this project's namespace", 2)
            parts = memory.internals
            count = parts.store.namespace_counts(parts.db.conn()).get(old, 0)
            if dry_run or not count:
                click.echo(f"would move {count} memories from {old} to {found.namespace}")
                return
            moved = adopt_namespace(parts.db, old, found.namespace, actor="cli")
        click.echo(f"moved {moved} memories from {old} to {found.namespace}")
