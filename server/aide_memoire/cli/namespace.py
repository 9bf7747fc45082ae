"""Which namespace a CLI command uses when ``--namespace`` is not given.

Inside a project (``$CLAUDE_PROJECT_DIR`` is set, or the working folder lies in a git
checkout) it is that project's namespace, the one the plugin's MCP server and hooks use
(engine/projects.py), so a note stored from the terminal comes back in that project's
sessions. Outside any project it is ``default``. ``-n .`` always means this folder's
project; ``status`` says which namespace a command would use and why.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

__all__ = ["DEFAULT", "cli_namespace", "namespace_option"]

DEFAULT = "default"
F = TypeVar("F", bound=Callable[..., Any])


def cli_namespace() -> tuple[str, str]:
    """(namespace, why) for a command run here without ``--namespace``."""
    from ..engine.core.projects import directory_from, project_for

    project = project_for(directory_from(os.environ, None))
    if os.environ.get("CLAUDE_PROJECT_DIR"):
        return project.namespace, f"the project of $CLAUDE_PROJECT_DIR ({project.root})"
    if project.git:
        return project.namespace, f"the project of this folder ({project.root})"
    return DEFAULT, "not inside a project (no git checkout, no $CLAUDE_PROJECT_DIR)"


def _resolve(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str:
    if value is None:
        return cli_namespace()[0]
    if value == ".":
        from ..engine.core.projects import directory_from, project_namespace

        return project_namespace(directory_from(os.environ, None))
    return value


def namespace_option(fn: F) -> F:
    """``--namespace/-n`` for a command that works in one namespace."""
    return click.option(
        "--namespace", "-n", default=None, callback=_resolve,
        help="Namespace to use (default: this project's inside a git project or under "
        "$CLAUDE_PROJECT_DIR, as the hooks and the MCP server use, else 'default'; "
        "'.': this folder's project).",
    )(fn)
