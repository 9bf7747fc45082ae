"""The tool Claude Code's ``mcp_tool`` hooks call: never listed, never for the model.

The plugin's UserPromptSubmit hook is ``{"type": "mcp_tool", "server": "aide-memoire",
"tool": "hook_prompt", "input": {"prompt": "${prompt}", "session_id": "${session_id}"}}``
(plugin/hooks/hooks.json): Claude Code calls it on the MCP session it already holds, so
no process starts per prompt and recall uses the server's loaded model. Claude Code
calls a tool by name without consulting tools/list (checked with `claude -p` 2.1.197,
tests/e2e), so the tool stays out of it: it costs no tools/list bytes, and the model is
never invited to call it. Its text is JSON of the hook output shape, the only form
Claude Code passes on to the model (hooks/warm.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from ..engine.core.domain import QUERY_MAX
from ..hooks.warm import hook_output, serve_prompt
from .spec import READ, ToolSpec

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory

from .models import ToolInput

__all__ = ["UNLISTED"]

PROMPT_MAX = 200_000  # a pasted log is still a prompt: its start is what recall reads


class HookPromptInput(ToolInput):
    prompt: str = Field(max_length=PROMPT_MAX, description="The prompt (${prompt}).")
    session_id: str = Field(default="", max_length=200,
                            description="Claude Code's session id (${session_id}).")


class HookPromptOutput(BaseModel):
    text: str = Field(description="What goes before the prompt; empty for nothing.")
    ids: list[str] = Field(description="The memories injected, best first.")


def hook_prompt(memory: Memory, args: HookPromptInput, namespace: str) -> HookPromptOutput:
    from ..hooks.home import log  # standard library only: the hooks' one log writer

    home = memory.settings.home

    def note(message: str, **fields: object) -> None:
        log(home, "mcp-tool-prompt", message, **fields)

    answer = serve_prompt(memory, namespace, args.prompt[:QUERY_MAX], args.session_id or None,
                          log=note)
    return HookPromptOutput(text=str(answer.get("text") or ""),
                            ids=[str(i) for i in answer.get("ids") or []])


def _render(out: HookPromptOutput) -> str:
    return hook_output(out.text)


UNLISTED: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="hook_prompt",
        title="Prompt hook",
        description="Claude Code's UserPromptSubmit hook (mcp_tool); not for agents.",
        input=HookPromptInput,
        output=HookPromptOutput,
        handler=hook_prompt,
        hints=READ,
        render=_render,
    ),
)
