"""Four server processes on one store, storing at the same time: every write lands.

The servers run keyword-only (AIDE_MEMOIRE_EMBEDDING_MODEL=none): with the full model,
four processes each loading it would take most of this test's time on 2 cores, and what
is tested here is SQLite locking between processes. Dense writes are tested elsewhere.
"""

from __future__ import annotations

from pathlib import Path

import anyio

from aide_memoire import Memory, Settings
from mcp import Client, StdioServerParameters

from .conftest import BIN, server_env

SERVERS = 4
PER_SERVER = 250
IN_FLIGHT = 8  # calls each client keeps open at once


async def _client_stores(home: Path, worker: int, errors: list[str]) -> None:
    params = StdioServerParameters(
        command=str(BIN / "aide-memoire"),
        args=["serve", "--namespace", "project:shared"],
        env=server_env(home, AIDE_MEMOIRE_EMBEDDING_MODEL="none"),
    )
    async with Client(params, mode="legacy") as client:
        limiter = anyio.CapacityLimiter(IN_FLIGHT)

        async def store(n: int) -> None:
            async with limiter:
                arguments = {"content": f"server {worker} memory {n}", "tags": [f"w{worker}"]}
                result = await client.call_tool("memory_store", arguments)
            if result.is_error:
                errors.append(result.content[0].text)  # type: ignore[union-attr]

        async with anyio.create_task_group() as tg:
            for n in range(PER_SERVER):
                tg.start_soon(store, n)


async def test_four_servers_store_1000_memories_at_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    Memory(settings=Settings(home=home, embedding_model="none")).close()  # create the store once
    errors: list[str] = []
    async with anyio.create_task_group() as tg:
        for worker in range(SERVERS):
            tg.start_soon(_client_stores, home, worker, errors)
    assert errors == []
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        assert memory.status().namespaces == {"project:shared": SERVERS * PER_SERVER}
        for worker in range(SERVERS):
            rows = memory.search(namespace="project:shared", tags=[f"w{worker}"], limit=1000)
            assert len(rows) == PER_SERVER
