"""``aide-memoire setup CLIENT``: add this server to an MCP client's config file.

The entry comes from the one table (``clients``) and goes in with ``configfile.merge``,
which keeps the file's other entries, layout and comments. Only this command writes: a
dry run prints the whole new file and writes nothing; an existing file is copied to
``<file>.bak`` before it changes; the write is atomic (a temporary file in the same
folder, then a rename), so a crash never leaves half a config. An entry that is already
there as it would be written is left alone.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import click

from ..engine.core.errors import AideMemoireError
from .clients import CLIENTS, SERVER_NAME, Where, client_by_id, launch_for
from .configfile import ConfigError, merge
from .output import EXIT_ERROR, EXIT_USAGE, emit, fail

__all__ = ["setup", "write_config"]

def this_command() -> str:
    """The absolute path of this install's `aide-memoire`: GUI clients do not start
    servers from a shell, so a bare name would often not be found."""
    exe = "aide-memoire.exe" if sys.platform.startswith("win") else "aide-memoire"
    beside = Path(sys.executable).parent / exe
    if beside.exists():
        return str(beside)
    return shutil.which("aide-memoire") or "aide-memoire"


def write_config(path: Path, text: str) -> Path | None:
    """Write ``text`` to ``path`` atomically; returns the backup of the old file, if any."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    mode = 0o600
    if path.exists():
        backup = path.with_name(path.name + ".bak")
        shutil.copy2(path, backup)
        mode = path.stat().st_mode & 0o777
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return backup


@click.command()
@click.argument("client_id", metavar="CLIENT", type=click.Choice([c.id for c in CLIENTS]))
@click.option("--project", is_flag=True,
              help="Write the project's config (in --dir) instead of the per-user one.")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path),
              default=Path("."), show_default=True, help="The project folder, with --project.")
@click.option("--dry-run", is_flag=True, help="Print the whole new file; write nothing.")
@click.option("--namespace", default=None,
              help="Fix the server's namespace (default: with --project, the project's; "
                   "Claude Desktop: user:me; else the project the client runs in).")
@click.option("--command", "command", default=None,
              help="The server command to write (default: this aide-memoire's full path).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.pass_context
def setup(ctx: click.Context, client_id: str, project: bool, folder: Path, dry_run: bool,
          namespace: str | None, command: str | None, as_json: bool) -> None:
    """Add aide-memoire to CLIENT's MCP config, keeping everything else in the file.

    CLIENT is one of: codex, gemini, vscode, cursor, windsurf, zed, opencode,
    claude-desktop, claude-code. See docs/clients.md for each file and how to check it.
    """
    client = client_by_id(client_id)
    assert client is not None  # click's Choice checked it
    project_dir = folder.expanduser().resolve() if project else None
    if project_dir is not None and not project_dir.is_dir():
        fail(f"--dir {folder} is not a folder", EXIT_USAGE)
    try:
        path = client.path(Where(Path.home()), project_dir)
        launch = launch_for(client, project=project_dir, namespace=namespace,
                            home=ctx.obj.get("home"),
                            command=command or this_command())
    except (ValueError, AideMemoireError) as exc:
        fail(str(exc), EXIT_USAGE)
    entry = client.shape(launch)
    try:
        # Bytes, not text mode: Windows line endings must survive the round trip.
        old = path.read_bytes().decode("utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {path}: {exc}", EXIT_ERROR)
    try:
        merged = merge(old, client.fmt, client.key, SERVER_NAME, entry)
    except ConfigError as exc:
        where = ".".join(client.key)
        fail(f"{path}: {exc}; nothing was written. Fix the file, or add this entry under "
             f"'{where}' by hand: \"{SERVER_NAME}\": {json.dumps(entry)}", EXIT_ERROR)
    backup = None
    if not dry_run and merged.action != "unchanged":
        try:
            backup = write_config(path, merged.text)
        except OSError as exc:
            fail(f"cannot write {path}: {exc}", EXIT_ERROR)
    result = {"client": client.id, "path": str(path), "action": merged.action,
              "dry_run": dry_run, "entry": entry, "previous": merged.previous,
              "backup": None if backup is None else str(backup), "check": client.check}
    if dry_run:
        verb = {"added": "would add", "updated": "would update",
                "unchanged": "already has"}[merged.action]
        click.echo(f"aide-memoire: dry run: {verb} '{SERVER_NAME}' in {path}; the file "
                   "would read:", err=True)
        emit(result, as_json=as_json, text=merged.text.rstrip("\n"))
        return
    said = {"added": "added", "updated": "updated", "unchanged": "already set up, unchanged:"}
    text = f"{client.name}: {said[merged.action]} '{SERVER_NAME}' in {path}"
    if backup is not None:
        text += f" (the previous file is {backup})"
    emit(result, as_json=as_json, text=f"{text}\ncheck: {client.check}")
