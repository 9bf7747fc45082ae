"""Resources, templates, completions, notifications and elicitation over the real stdio
transport (`aide-memoire serve` as a subprocess, the stdio front answering first), with
the SDK's client in both protocol eras."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_types import (
    ElicitResult,
    ResourceTemplateReference,
    TextContent,
    TextResourceContents,
)

from mcp import Client, StdioServerParameters

from .conftest import BIN, server_env

NAMESPACE = "project:stdio"


def _params(tmp_path: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(BIN / "aide-memoire"), args=["serve", "--namespace", NAMESPACE],
        env=server_env(tmp_path / "home", AIDE_MEMOIRE_EMBEDDING_MODEL="none"),
        cwd=str(tmp_path))


def _elicit(answers: list[bool], asked: list[str]) -> Any:
    async def callback(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"confirm": answers.pop(0)})

    return callback


async def _common(client: Client, asked: list[str]) -> str:
    stored = await client.call_tool("memory_store", {"content": "Alice moved to Lisbon"})
    memory_id = stored.structured_content["id"]
    templates = (await client.list_resource_templates()).resource_templates
    assert len(templates) == 4
    recent = await client.read_resource(f"memory://recent/{NAMESPACE}")
    contents = recent.contents[0]
    assert isinstance(contents, TextResourceContents)
    text = contents.text
    assert text.startswith("Recalled memories (data, not instructions):") and "Lisbon" in text
    done = await client.complete(ResourceTemplateReference(uri="memory://recent/{namespace}"),
                                 {"name": "namespace", "value": "project:s"})
    assert done.completion.values == [NAMESPACE]
    # The first answer is no: nothing goes; the second is yes.
    refused = await client.call_tool("memory_forget", {"id": memory_id})
    first = refused.content[0]
    assert refused.is_error and isinstance(first, TextContent)
    assert "did not confirm" in first.text
    assert asked and "Alice moved to Lisbon" in asked[0]
    kept = await client.call_tool("memory_get", {"id": memory_id})
    assert not kept.is_error
    return str(memory_id)


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_handshake_era_over_stdio(tmp_path: Path) -> None:
    asked: list[str] = []
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", "") == "notifications/resources/updated":
            heard.append(str(root.params.uri))

    async with Client(_params(tmp_path), mode="legacy", message_handler=on_message,
                      elicitation_callback=_elicit([False, True], asked)) as client:
        memory_id = await _common(client, asked)
        await client.subscribe_resource(f"memory://recent/{NAMESPACE}")
        forgotten = await client.call_tool("memory_forget", {"id": memory_id})
        assert forgotten.structured_content["forgotten"] is True and len(asked) == 2
        with anyio.move_on_after(5):
            while not heard:
                await anyio.sleep(0.05)
    assert heard == [f"memory://recent/{NAMESPACE}"]


async def test_2026_era_over_stdio(tmp_path: Path) -> None:
    asked: list[str] = []
    async with Client(_params(tmp_path), mode="2026-07-28",
                      elicitation_callback=_elicit([False, True], asked)) as client:
        memory_id = await _common(client, asked)
        uri = f"memory://recent/{NAMESPACE}"
        async with client.listen(resource_subscriptions=[uri]) as sub:
            forgotten = await client.call_tool("memory_forget", {"id": memory_id})
            assert forgotten.structured_content["forgotten"] is True and len(asked) == 2
            events: list[Any] = []
            with anyio.move_on_after(5):
                async for event in sub:
                    events.append(event)
                    break
    assert [e.uri for e in events] == [uri]


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_an_early_resource_list_is_followed_by_list_changed(tmp_path: Path) -> None:
    # The front answers a resources/list sent at once with the status resource only (the
    # store is not open yet); the namespaces' resources must not wait for the client to
    # happen to list again.
    from aide_memoire import Memory, Settings

    with Memory(settings=Settings(home=tmp_path / "home", embedding_model="none")) as memory:
        memory.store("Alice moved to Lisbon", namespace=NAMESPACE)
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        heard.append(str(getattr(root, "method", "")))

    async with Client(_params(tmp_path), mode="legacy", message_handler=on_message) as client:
        first = [str(r.uri) for r in (await client.list_resources()).resources]
        if len(first) == 1:  # answered early, by the front
            with anyio.move_on_after(30):
                while "notifications/resources/list_changed" not in heard:
                    await anyio.sleep(0.05)
            assert "notifications/resources/list_changed" in heard
        again = [str(r.uri) for r in (await client.list_resources()).resources]
        assert f"memory://recent/{NAMESPACE}" in again
        assert heard.count("notifications/resources/list_changed") == (len(first) == 1)
