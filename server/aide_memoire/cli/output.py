"""How the CLI prints, in one place: results on stdout, errors on stderr, exit codes.

Rules every command follows (tests/cli/test_output_rules.py checks them):

- stdout carries results only: one JSON document with ``--json``, readable text otherwise.
- An error is one line ``aide-memoire: error: <what, and what to do>`` on stderr, never
  on stdout; with ``--json`` a failed result's document still goes to stdout for scripts.
- Exit codes (``EXIT_CODES``, listed in docs/cli.md): 0 done, 1 failed or not found,
  2 bad input, 3 busy (another runner holds the lease), 4 an optional part is missing.
- Counts read as words: ``plural(1, "memory")`` is "1 memory".
- A score is shown only where it means something on its own; recall's fused score is
  relative to one call (the last hit is 0 by construction), so text shows the ranks.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

import click
from pydantic import BaseModel

from ..engine.core import parts
from ..engine.core.errors import AideMemoireError, InvalidInput, PartMissing
from ..engine.core.models import Hit, MemoryRecord

__all__ = [
    "EXIT_BUSY",
    "EXIT_CODES",
    "EXIT_ERROR",
    "EXIT_MISSING_PART",
    "EXIT_OK",
    "EXIT_USAGE",
    "emit",
    "emit_failure",
    "engine_errors",
    "fail",
    "format_hit",
    "format_record",
    "format_records",
    "needs_part",
    "plural",
    "why",
]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_BUSY = 3
EXIT_MISSING_PART = 4

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "done (for a check such as `doctor` or `audit verify`: healthy)",
    EXIT_ERROR: "failed: not found, nothing to do, or a check found a problem",
    EXIT_USAGE: "bad input: a wrong option, argument or value (the message names it)",
    EXIT_BUSY: "busy: another maintenance runner holds the namespace; try again later",
    EXIT_MISSING_PART: "an optional part is not installed; the message names the extra",
}

# Plurals that do not just add "s".
_PLURALS = {"memory": "memories", "summary": "summaries", "entity": "entities",
            "proposal": "proposals", "match": "matches"}


def plural(count: int, singular: str) -> str:
    """``"1 memory"``, ``"2 memories"``, ``"0 memories"``."""
    word = singular if count == 1 else _PLURALS.get(singular, singular + "s")
    return f"{count} {word}"


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


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    click.echo(f"aide-memoire: error: {message}", err=True)
    sys.exit(code)


@contextlib.contextmanager
def engine_errors() -> Iterator[None]:
    """Engine errors inside the block leave as one line on stderr and their kind's exit
    code: bad input 2, a missing optional part 4, any other 1."""
    try:
        yield
    except InvalidInput as exc:
        fail(str(exc), EXIT_USAGE)
    except PartMissing as exc:
        fail(str(exc), EXIT_MISSING_PART)
    except AideMemoireError as exc:
        fail(str(exc), EXIT_ERROR)


def emit_failure(value: Any, *, as_json: bool, message: str, code: int = EXIT_ERROR) -> NoReturn:
    """A result that did not happen: its JSON on stdout with --json, the error on stderr."""
    if as_json:
        emit(value, as_json=True)
    fail(message, code)


def needs_part(name: str) -> None:
    """Exit with the message naming the extra when optional part ``name`` is missing."""
    message = parts.missing_message(name)
    if message is not None:
        fail(message, EXIT_MISSING_PART)


def _when(record: MemoryRecord | Hit) -> str:
    moment = record.observed_at or record.created_at
    return moment.strftime("%Y-%m-%d %H:%M")


def format_record(record: MemoryRecord) -> str:
    tags = f"  [{', '.join(record.tags)}]" if record.tags else ""
    head = f"{record.id}  {record.kind}  {_when(record)}  {record.namespace}{tags}"
    return f"{head}\n    {record.content}"


def why(ranks: dict[str, int]) -> str:
    """``bm25 #1, dense #3``: the ranks each retriever gave say why a hit came back; the
    fused score does not (it is scaled within the call), so it stays in --json only."""
    return ", ".join(f"{name} #{place}" for name, place in sorted(ranks.items())) or "filter"


def format_hit(rank: int, hit: Hit) -> str:
    head = f"{rank:>3}. {hit.id}  {hit.kind}  {_when(hit)}  ({why(hit.ranks)})"
    replaced = f"  (superseded by {hit.superseded_by})" if hit.superseded_by else ""
    return f"{head}{replaced}\n     {hit.content}"


def format_records(records: Sequence[MemoryRecord]) -> str:
    if not records:
        return "no memories"
    return "\n".join(format_record(r) for r in records)
