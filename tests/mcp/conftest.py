"""Fixtures for the MCP tests: a keyword-only store (fast; dense recall is tested in the
engine tests and by the stdio test) and an in-memory client to the real server."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.mcp.server import ServeSettings, build_server
from mcp import Client

NAMESPACE = "project:test"
BIN = Path(sys.executable).parent


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    settings = Settings(home=tmp_path / "home", embedding_model="none", max_content_bytes=2000)
    with Memory(settings=settings) as m:
        yield m


@asynccontextmanager
async def connect(memory: Memory, namespace: str = NAMESPACE) -> AsyncIterator[Client]:
    """An in-memory client to the real server (opened inside each test: the SDK's client
    owns task groups that must close in the task that opened them)."""
    server = build_server(memory, ServeSettings(default_namespace=namespace))
    async with Client(server, mode="legacy") as client:
        yield client


def server_env(home: Path, **extra: str) -> dict[str, str]:
    """Environment for a server subprocess (the stdio client passes only a small allow-list)."""
    env = {"AIDE_MEMOIRE_HOME": str(home), "PATH": os.environ.get("PATH", "")}
    if "PYTHONPATH" in os.environ:  # run the code under test, not the installed copy
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    env.update(extra)
    return env
