"""Run the CLI in this process (click's CliRunner), with a subprocess's result shape.

A process per command costs an interpreter start and every import (about a second on
these machines): command tests that check behaviour, not process plumbing, run here.
The end-to-end tests (tests/cli, plugin, MCP stdio) still spawn real processes.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from aide_memoire.cli.main import cli

__all__ = ["Completed", "invoke", "outside_projects"]


@contextlib.contextmanager
def outside_projects() -> Iterator[Path]:
    """The working folder moved to a fresh temporary folder in no git checkout."""
    with (tempfile.TemporaryDirectory(prefix="aide-memoire-cwd-") as folder,
          contextlib.chdir(folder)):
        yield Path(folder)


@dataclass(frozen=True)
class Completed:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def invoke(
    home: Path, *args: str, env: Mapping[str, str] | None = None,
    stdin: str | bytes | None = None,
    check: bool = False,
) -> Completed:
    """``aide-memoire --home HOME ARGS`` keyword-only unless ``env`` says otherwise."""
    environment: dict[str, str | None] = {"AIDE_MEMOIRE_EMBEDDING_MODEL": "none",
                                          "CLAUDE_PROJECT_DIR": None, **(env or {})}
    # Run from a folder outside any project, so the default namespace is 'default'
    # (inside this repository's checkout it would be the checkout's project).
    with outside_projects():
        result = CliRunner().invoke(cli, ["--home", str(home), *args], env=environment,
                                    input=stdin, catch_exceptions=False)
    done = Completed(tuple(args), result.exit_code, result.stdout, result.stderr)
    if check and done.returncode != 0:
        raise AssertionError(f"aide-memoire {' '.join(args)} failed ({done.returncode}): "
                             f"{done.stderr}")
    return done
