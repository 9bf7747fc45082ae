"""``aide-memoire import claude-code``: backfill the memory from existing transcripts.

Reads ``$HOME/.claude/projects/*/*.jsonl`` with the rules of live capture (private spans
out, secrets redacted, injection held, one turn per transcript line uuid, so a second run
adds nothing). Each transcript goes to the namespace of the project its lines were
recorded in (their ``cwd``); a project with ``.aide-memoire/capture-off`` is skipped.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

__all__ = ["import_claude_code"]


def transcripts_root() -> Path:
    return Path(os.path.expanduser("~")) / ".claude" / "projects"


def transcript_cwd(path: Path) -> str | None:
    """The working directory the session was recorded in (first line that names one)."""
    try:
        with path.open("rb") as fh:
            for raw in fh:
                try:
                    record = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(record, dict) and isinstance(record.get("cwd"), str):
                    return str(record["cwd"])
    except OSError:
        return None
    return None


def import_claude_code(
    memory: Any, *, project_dir: Path | None, every: bool, dry_run: bool
) -> dict[str, Any]:
    """Import the transcripts of one project (or all); returns the counts."""
    from tqdm import tqdm

    from ..engine.core.projects import project_for
    from ..hooks.capture import capture_enabled, capture_transcript
    from ..hooks.state import capture_lock

    files = sorted(transcripts_root().glob("*/*.jsonl"))
    wanted = None if every else project_for(project_dir or Path.cwd()).root
    totals: dict[str, Any] = {"sessions": 0, "turns": 0, "present": 0, "redacted": 0,
                              "private": 0, "malformed": 0, "skipped_off": 0,
                              "transcripts": 0, "namespaces": {}}
    for path in tqdm(files, desc="claude-code", unit="file", file=sys.stderr,
                     disable=not files):
        cwd = transcript_cwd(path)
        if cwd is None:
            continue
        project = project_for(cwd)
        if wanted is not None and project.root != wanted:
            continue
        on, _ = capture_enabled(memory.settings.model_copy(update={"capture": True}),
                                project.root)
        if not on:
            totals["skipped_off"] += 1
            continue
        with capture_lock(memory.settings.home, project.namespace):
            report = capture_transcript(memory, path, namespace=project.namespace, final=True,
                                        dry_run=dry_run)
        totals["transcripts"] += 1
        for key in ("sessions", "turns", "present", "redacted", "private", "malformed"):
            totals[key] += getattr(report, key)
        if report.turns:
            names = totals["namespaces"]
            names[project.namespace] = names.get(project.namespace, 0) + report.turns
    return totals


def summary(totals: dict[str, Any], dry_run: bool) -> str:
    verb = "would add" if dry_run else "added"
    lines = [f"{verb} {totals['turns']} turns from {totals['sessions']} sessions "
             f"({totals['transcripts']} transcripts read, {totals['present']} turns already "
             f"stored, {totals['redacted']} secrets redacted, {totals['private']} private "
             f"spans left out)"]
    lines += [f"  {ns:<40} {n}" for ns, n in sorted(totals["namespaces"].items())]
    if totals["skipped_off"]:
        lines.append(f"skipped {totals['skipped_off']} transcripts: capture is off there")
    return "\n".join(lines)


def run(ctx: click.Context, open_memory: Any, project_dir: Path | None, every: bool,
        dry_run: bool, as_json: bool) -> None:
    from .output import emit

    with open_memory(ctx) as memory:
        memory.actor = "import"
        totals = import_claude_code(memory, project_dir=project_dir, every=every,
                                    dry_run=dry_run)
    emit({**totals, "dry_run": dry_run}, as_json=as_json, text=summary(totals, dry_run))
