"""The prompt hook served by a process that already holds the engine (the plugin's MCP
server through Claude Code's ``mcp_tool`` hooks): no process is spawned per prompt, and
recall is hybrid with the model the server has loaded.

The same rules as the command hook (cli/hook.py): the session's injected list under its
lock (a memory at most once per session), the hook log line, the injection log.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .injections import record_request
from .service import handle
from .state import session_state

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory

__all__ = ["HOOK_EVENT", "hook_output", "serve_prompt"]

HOOK_EVENT = "UserPromptSubmit"
SERVED_BY = "mcp_tool"
WARM_WAIT_S = 6.0  # well under the hook's timeout in plugin/hooks/hooks.json (30 s)


def hook_output(text: str) -> str:
    """The tool's text as Claude Code reads it: JSON of the hook output shape (plain text
    is logged by Claude Code and never reaches the model); ``{}`` adds nothing."""
    if not text:
        return "{}"
    return json.dumps({"hookSpecificOutput": {"hookEventName": HOOK_EVENT,
                                              "additionalContext": text}})


# (message, fields): the edge's hook log writer (cli/hook.py ``log``); the engine has none.
Log = Callable[..., None]


def _quiet(message: str, **fields: Any) -> None:
    return None


def serve_prompt(memory: Memory, namespace: str, prompt: str,
                 session_id: str | None, *, log: Log = _quiet) -> dict[str, Any]:
    """The hook service's answer for ``prompt`` (``text``, ``ids``, maybe ``reasons``)."""
    started = time.perf_counter()
    if not prompt.strip():
        return {"text": "", "ids": []}
    embedder = memory.internals.embedder
    if memory.internals.recaller.dense_live() and not embedder.ready:
        # The first prompt of a session can come while the server still loads the model
        # (a few seconds). Wait for it within the hook's timeout rather than lose this
        # prompt's memory; past WARM_WAIT_S the prompt goes on without memory.
        embedder.wait(WARM_WAIT_S)
        if embedder.loading:
            log("model still loading: nothing injected", waited_s=WARM_WAIT_S)
            return {"text": "", "ids": []}
    request: dict[str, Any] = {"op": "prompt", "namespace": namespace, "prompt": prompt,
                               "session_id": session_id}
    home = memory.settings.home
    if session_id:
        with session_state(home, session_id, "inject") as state:
            request["exclude"] = sorted(state.injected())
            answer = handle(memory, request)
            ids = [str(i) for i in answer.get("ids") or []]
            if ids:
                state.add_injected(ids)
                state.save()
    else:
        answer = handle(memory, request)
    record_request(home, request, answer, SERVED_BY)
    log("done", injected=len(answer.get("ids") or []),
         ms=round((time.perf_counter() - started) * 1000, 1))
    return answer
