"""The tool Claude Code's mcp_tool prompt hook calls: callable by name, never listed,
answering in the hook output shape, once per session, and refusing bad arguments."""

from __future__ import annotations

import json
from typing import Any

from aide_memoire import Memory

from .conftest import NAMESPACE, connect

NOTE = "The feature flags service reads its rules from the tangerine bucket every minute."
PROMPT = "Where does the feature flags service read its rules from?"


def _text(result: Any) -> str:
    """The first content block's text (the hook tool answers with one text block)."""
    return str(result.content[0].text)


async def test_hook_prompt_is_callable_but_not_listed(memory: Memory) -> None:
    memory_id = memory.store(NOTE, namespace=NAMESPACE)
    async with connect(memory) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert "hook_prompt" not in listed
        result = await client.call_tool("hook_prompt", {"prompt": PROMPT, "session_id": "s1"})
        assert not result.is_error
        shaped = json.loads(_text(result))
        context = shaped["hookSpecificOutput"]["additionalContext"]
        assert shaped["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
        assert "tangerine bucket" in context and memory_id in context
        assert result.structured_content["ids"] == [memory_id]
        # Once per session: the same prompt again adds nothing.
        again = await client.call_tool("hook_prompt", {"prompt": PROMPT, "session_id": "s1"})
        assert json.loads(_text(again)) == {}
        # An unrelated prompt gets nothing either.
        other = await client.call_tool("hook_prompt", {"prompt": "Write a haiku about rain.",
                                                        "session_id": "s2"})
        assert json.loads(_text(other)) == {}


async def test_hook_prompt_refuses_bad_arguments(memory: Memory) -> None:
    async with connect(memory) as client:
        missing = await client.call_tool("hook_prompt", {"session_id": "s1"})
        assert missing.is_error and "prompt" in _text(missing)
        extra = await client.call_tool("hook_prompt", {"prompt": "x", "cwd": "/tmp"})
        assert extra.is_error and "cwd" in _text(extra)
