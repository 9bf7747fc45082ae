"""Who a write's words come from, and what that changes in the screen.

Five provenances, decided by the write path, never by the text:

- ``person``: words a person typed: the CLI, the user's own prompts in a captured
  transcript, a review decision's edited text;
- ``model``: the model's own words: a ``memory_*`` call over MCP, the assistant's turns;
- ``tool``: what a tool returned or acted on (a captured tool line, a turn whose role is
  ``tool``: fetched pages, command output);
- ``import``: a line of an import file, whoever wrote it first;
- ``program``: a Python program calling the engine (the default): strict, like the others.

A person's explicit rule is theirs to keep: "Remember: you must always squash commits
before merging", typed by the person, is a standing instruction, not an attack. The same
words from a fetched page, an import or the model are exactly what a poisoning looks
like, so they are held. Only the rules that read a *rule given to the agent* are relaxed
for a person (``PERSON_RULES``); overrides, claims of authority, exfiltration, payloads,
tool-call markup and hidden characters are held whoever wrote them (a person pastes text
too).
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["PERSON_RULES", "PROVENANCES", "Provenance", "for_person", "provenance_of"]

Provenance = Literal["person", "model", "tool", "import", "program"]
PROVENANCES: tuple[Provenance, ...] = ("person", "model", "tool", "import", "program")

# Rules that read a standing order to the agent: a person's rule when a person gives it.
PERSON_RULES = frozenset({"addressed-order", "run-command", "persistent-order", "future-order"})

# Sources whose turns are a captured Claude Code transcript (hooks/capture.py) and whose
# roles are therefore the transcript's own: user = the person, assistant = the model.
CAPTURED_SOURCES = frozenset({"claude-code"})


def _get(row: Any, name: str) -> Any:
    return row.get(name) if isinstance(row, dict) else getattr(row, name, None)


def provenance_of(row: Any, *, actor: str, imported: bool = False) -> Provenance:
    """The provenance of one row written by ``actor`` (the audit log's actor)."""
    if imported:
        return "import"
    role = _get(row, "role")
    if role == "tool":
        return "tool"
    if role == "assistant":
        return "model"
    if role == "user" and _get(row, "source") in CAPTURED_SOURCES:
        return "person"  # the user's own prompt in a captured transcript
    if actor in ("cli", "review"):
        return "person"
    if actor == "mcp" or actor.startswith("mcp:"):
        return "model"
    if actor in ("hook", "import"):  # a captured turn without a known role
        return "tool"
    return "program"


def for_person(rule: str, provenance: str) -> bool:
    """True when a finding of ``rule`` is the person's own rule, not an attack."""
    return provenance == "person" and rule in PERSON_RULES
