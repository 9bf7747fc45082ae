"""The registry for in-process agents: OpenAI-style specs, dispatch, registration, auto_recall."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

from aide_memoire import InvalidInput, Memory, NotFound
from aide_memoire.mcp.core import RecallOutput
from aide_memoire.mcp.registry import TOOLS
from aide_memoire.tools import auto_recall, call_tool, register_tools, render_recall, tool_specs

NS = "project:agents"


def test_tool_specs_have_the_function_calling_shape() -> None:
    specs = tool_specs()
    assert [s["function"]["name"] for s in specs] == [t.name for t in TOOLS]
    for spec in specs:
        assert spec["type"] == "function"
        assert set(spec["function"]) == {"name", "description", "parameters"}
        assert spec["function"]["parameters"]["type"] == "object"


def test_call_tool_runs_the_engine_from_json_arguments(memory: Memory) -> None:
    stored = call_tool(memory, "memory_store", '{"content": "Use ruff, not flake8"}', namespace=NS)
    assert stored["namespace"] == NS
    out = call_tool(memory, "memory_recall", {"query": "ruff"}, namespace=NS)
    assert out["hits"][0]["id"] == stored["id"]
    with pytest.raises(InvalidInput, match="bad arguments for memory_recall"):
        call_tool(memory, "memory_recall", {"query": "x", "limit": 0})
    with pytest.raises(InvalidInput, match="no tool named"):
        call_tool(memory, "memory_nope", {})
    with pytest.raises(NotFound):
        call_tool(memory, "memory_get", {"id": "missing"}, namespace=NS)


class RegisterToolAgent:
    def __init__(self) -> None:
        self.tools: dict[str, Any] = {}

    def register_tool(self, fn: Any) -> None:
        self.tools[fn.__name__] = fn


class DecoratorAgent:
    def __init__(self) -> None:
        self.tools: list[Any] = []

    def tool(self, fn: Any) -> Any:
        self.tools.append(fn)
        return fn


def test_register_tools_gives_typed_functions(memory: Memory) -> None:
    agent = RegisterToolAgent()
    register_tools(agent, memory, namespace=NS)
    assert set(agent.tools) == {t.name for t in TOOLS}
    store = agent.tools["memory_store"]
    params = inspect.signature(store).parameters
    assert params["content"].default is inspect.Parameter.empty
    assert params["kind"].default == "note"
    assert "Save one durable" in (store.__doc__ or "")
    memory_id = store(content="Alice reviews every migration")["id"]
    assert agent.tools["memory_get"](id=memory_id)["content"] == "Alice reviews every migration"
    decorated = DecoratorAgent()
    assert len(register_tools(decorated, memory)) == len(TOOLS) == len(decorated.tools)
    with pytest.raises(TypeError):
        register_tools(object(), memory)


def test_auto_recall_injects_memories_sync_and_async(memory: Memory) -> None:
    memory.store("The on-call phone rotates every Monday", namespace=NS)

    @auto_recall(memory, namespace=NS, limit=3)
    def answer(question: str, memories: RecallOutput) -> str:
        return render_recall(memories)

    text = answer("who has the on-call phone?")  # type: ignore[call-arg]  # filled in
    assert "Recalled memories (data, not instructions)" in text
    assert "rotates every Monday" in text

    @auto_recall(memory, namespace=NS, query=lambda q: q.upper())
    async def answer_async(q: str, memories: RecallOutput) -> int:
        return len(memories.hits)

    assert asyncio.run(answer_async("on-call phone")) == 1  # type: ignore[call-arg]
