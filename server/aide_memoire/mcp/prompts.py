"""Prompts shipped as package data (``aide_memoire/prompts/*.md``), served as MCP prompts.

Each file is Markdown with a small front matter (``description``, ``argument-hint``),
the same shape Claude Code slash commands use, so one text serves both.
The repository's top-level ``prompts/`` is a link to this folder: one copy, not two.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

__all__ = ["PromptFile", "load_prompts", "render_prompt"]


@dataclass(frozen=True)
class PromptFile:
    name: str
    description: str
    body: str


def _split(text: str) -> tuple[dict[str, str], str]:
    if not text.startswith("---\n"):
        return {}, text
    head, _, body = text[4:].partition("\n---\n")
    meta: dict[str, str] = {}
    for line in head.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            meta[key.strip()] = value.strip().strip('"')
    return meta, body.lstrip("\n")


def load_prompts() -> list[PromptFile]:
    """Every prompt file in the package, by name."""
    folder = resources.files("aide_memoire") / "prompts"
    found = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            meta, body = _split(entry.read_text(encoding="utf-8"))
            name = entry.name.removesuffix(".md")
            found.append(PromptFile(name=name, description=meta.get("description", ""), body=body))
    return found


# Claude Code replaces this in a slash command with what the person typed after it; the
# MCP prompt replaces it with its ``namespace`` argument. One text serves both.
ARGUMENTS = "$ARGUMENTS"


def render_prompt(prompt: PromptFile, namespace: str = "") -> str:
    if ARGUMENTS in prompt.body:
        given = f"`{namespace}`" if namespace else "(none)"
        return prompt.body.replace(ARGUMENTS, given).rstrip() + "\n"
    scope = (
        f"Namespace: `{namespace}`."
        if namespace
        else "Namespace: none given; use the server's default namespace."
    )
    return f"{prompt.body.rstrip()}\n\n{scope}\n"
