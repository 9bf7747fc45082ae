"""How the CLI prints: one JSON document on stdout with --json, readable text otherwise."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import click
from pydantic import BaseModel

from ..engine.models import Hit, MemoryRecord

__all__ = ["emit", "fail", "format_hit", "format_record"]


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def emit(value: Any, *, as_json: bool, text: str | None = None) -> None:
    if as_json:
        click.echo(json.dumps(_plain(value), ensure_ascii=False, indent=2))
    elif text is not None:
        click.echo(text)


def fail(message: str, code: int = 1) -> None:
    click.echo(f"aide-memoire: error: {message}", err=True)
    sys.exit(code)


def _when(record: MemoryRecord | Hit) -> str:
    moment = record.observed_at or record.created_at
    return moment.strftime("%Y-%m-%d %H:%M")


def format_record(record: MemoryRecord) -> str:
    tags = f"  [{', '.join(record.tags)}]" if record.tags else ""
    head = f"{record.id}  {record.kind}  {_when(record)}  {record.namespace}{tags}"
    return f"{head}\n    {record.content}"


def format_hit(rank: int, hit: Hit) -> str:
    why = ", ".join(f"{name} #{place}" for name, place in sorted(hit.ranks.items()))
    head = f"{rank:>3}. {hit.id}  {hit.kind}  {_when(hit)}  score {hit.score:.4f}  ({why})"
    replaced = f"  (superseded by {hit.superseded_by})" if hit.superseded_by else ""
    return f"{head}{replaced}\n     {hit.content}"


def format_records(records: Sequence[MemoryRecord]) -> str:
    if not records:
        return "no memories"
    return "\n".join(format_record(r) for r in records)
