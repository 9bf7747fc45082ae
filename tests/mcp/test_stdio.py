"""`aide-memoire serve` as a subprocess, over stdio, with the SDK's client and the real model."""

from __future__ import annotations

from pathlib import Path

from mcp.types import TextContent

from aide_memoire.engine.core.projects import project_namespace
from aide_memoire.mcp.registry import TOOLS
from mcp import Client, StdioServerParameters

from .conftest import BIN, server_env


async def test_serve_over_stdio(tmp_path: Path) -> None:
    project = tmp_path / "Shop Front"
    project.mkdir()
    params = StdioServerParameters(
        command=str(BIN / "aide-memoire"),
        args=["serve"],
        env=server_env(tmp_path / "home", CLAUDE_PROJECT_DIR=str(project)),
        cwd=str(tmp_path),
    )
    async with Client(params, mode="legacy") as client:
        assert client.server_info is not None and client.server_info.name == "aide-memoire"
        assert [t.name for t in (await client.list_tools()).tools] == [t.name for t in TOOLS]
        stored = await client.call_tool(
            "memory_store", {"content": "The storefront caches prices for five minutes"}
        )
        # The project's namespace: readable folder name plus a hash of its path.
        assert stored.structured_content["namespace"] == project_namespace(project)
        assert project_namespace(project).startswith("project:Shop-Front-")
        # A recall that arrives before the model has loaded waits for it: dense ranks too.
        recalled = await client.call_tool("memory_recall", {"query": "how long are prices cached?"})
        hits = recalled.structured_content["hits"]
        assert hits and hits[0]["id"] == stored.structured_content["id"]
        status = await client.call_tool("memory_status", {})
        dense = next(s for s in status.structured_content["stages"] if s["name"] == "dense")
        assert dense["live"] is True
        assert "dense" in hits[0]["ranks"]
        bad = await client.call_tool("memory_recall", {"query": "x", "limit": "lots"})
        assert bad.is_error
        prompt = await client.get_prompt("review-memory", {})
        content = prompt.messages[0].content
        assert isinstance(content, TextContent)
        assert "memory_review_queue" in content.text


async def test_stdio_server_gives_keyword_only_rows_their_vectors(tmp_path: Path) -> None:
    # Rows a hook process captured without the model (no daemon running): the stdio
    # server alone must encode them, so that recall finds them by meaning too.
    import anyio

    from aide_memoire import Memory, Settings

    home = tmp_path / "home"
    namespace = "project:catch-up"
    with Memory(settings=Settings(home=home, embedding_model="none")) as keyword_only:
        ids = keyword_only.store_many(
            [{"content": f"Release {n} of the storefront caches prices for five minutes"}
             for n in range(70)],  # more than one catch-up batch
            namespace=namespace)
    params = StdioServerParameters(
        command=str(BIN / "aide-memoire"), args=["serve", "--namespace", namespace],
        env=server_env(home), cwd=str(tmp_path))
    async with Client(params, mode="legacy") as client:
        await client.list_tools()
        dense: set[str] = set()
        with anyio.move_on_after(120):
            while not set(ids) <= dense:
                recalled = await client.call_tool(
                    "memory_recall", {"query": "how long are prices kept?", "limit": 100})
                dense |= {h["id"] for h in recalled.structured_content["hits"]
                          if "dense" in h["ranks"]}
                await anyio.sleep(0.5)
        assert set(ids) <= dense, f"{len(set(ids) - dense)} of {len(ids)} rows lack a vector"
