"""``aide-memoire injections``: what the prompt hook put before each prompt, and why."""

from __future__ import annotations

import time
from typing import Any

import click

from .hook import data_home
from .output import emit

__all__ = ["injections"]


def _format(entries: list[dict[str, Any]]) -> str:
    from ..hooks.injections import describe_reasons

    if not entries:
        return "nothing injected yet (or nothing for that session)"
    lines = []
    for entry in entries:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(float(entry.get("time", 0))))
        lines.append(f"{stamp} UTC  session {entry.get('session_id') or '-'}  "
                     f"{entry.get('namespace')}  via {entry.get('served_by')}")
        lines.append(f"  prompt: {entry.get('prompt', '')}")
        for memory in entry.get("memories", []):
            why = describe_reasons(memory)
            lines.append(f"  - {memory.get('id')}" + (f"  ({why})" if why else ""))
    return "\n".join(lines)


@click.command()
@click.option("--session", "session_id", default=None,
              help="Only this Claude Code session (its id, as the list shows it).")
@click.option("--namespace", "-n", default=None, help="Only this namespace (default: all).")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True,
              help="The latest this many prompts that received memory.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.pass_context
def injections(ctx: click.Context, session_id: str | None, namespace: str | None, limit: int,
               as_json: bool) -> None:
    """What the prompt hook injected before each prompt, per session, and why (the gate's
    scores); read from <home>/hooks/injections.jsonl (docs/hooks.md)."""
    from ..hooks.injections import read_injections

    found = read_injections(data_home(ctx.obj.get("home")), session_id=session_id,
                            namespace=namespace, limit=limit)
    emit({"injections": found}, as_json=as_json, text=_format(found))
