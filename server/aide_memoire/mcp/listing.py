"""``listing.json``: what the real server answers to ``initialize``, ``tools/list``,
``prompts/list`` and ``resources/list``, for the stdio front (``front``) to answer with
before the SDK has loaded. Claude Code counts a server as connected (and lets its
``mcp_tool`` hooks call it) only once all three lists have come back, so a list left to
the SDK delays the first prompt's memory by the SDK's whole import.

Regenerate after changing a tool, the server's identity or the SDK:
``python -m aide_memoire.mcp.listing > server/aide_memoire/mcp/listing.json``
(tests/mcp/test_front.py fails while it is stale). The answers are taken from a real
server session, not rebuilt by hand: every tool of the registry (each marked with the
part it needs, so the front publishes exactly what ``available_tools`` would), and one
handshake per protocol version the SDK knows, to record which ones it accepts.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

import anyio
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

from ..engine.core.errors import StoreError
from .edge import LazyMemory
from .registry import TOOLS
from .server import MemoryServer, build_server
from .stdio import run_on_lines

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory

__all__ = ["exchange", "generate", "handshake"]

UNKNOWN_VERSION = "1999-01-01"  # a version no SDK supports: shows the SDK's fallback


class _NoStore(LazyMemory):
    """No store at all: the lists are the same for every store, and ``resources/list``
    (the one list that asks for the store, to name its busiest namespaces) falls back to
    the status resource alone, as it does when a store does not open. Refused without a
    log line, since a listing run has no store to report on."""

    def __init__(self) -> None:
        super().__init__(self._refuse)

    def get(self) -> Memory:
        return self._refuse()

    @staticmethod
    def _refuse() -> Memory:
        raise StoreError("the listing is taken without a store")


def handshake(version: str, request_id: int | str = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "listing", "version": "0"}}}


async def exchange(server: MemoryServer, messages: Sequence[dict[str, Any]]) -> list[Any]:
    """The server's answers, as the stdio wire carries them, to ``messages`` sent in order
    (the session ends once every request has its answer)."""
    expected = sum(1 for m in messages if "id" in m)
    answers: list[Any] = []
    done = anyio.Event()

    async def lines() -> AsyncIterator[str]:
        for message in messages:
            yield json.dumps(message)
        await done.wait()

    def collect(text: str) -> None:
        answers.append(json.loads(text))
        if len(answers) >= expected:
            done.set()

    await run_on_lines(server, lines(), collect)
    return answers


def generate() -> dict[str, Any]:
    server = build_server(_NoStore(), tools=TOOLS)
    answers: dict[str, dict[str, Any]] = {}
    for version in (*KNOWN_PROTOCOL_VERSIONS, UNKNOWN_VERSION):
        (answer,) = anyio.run(exchange, server, [handshake(version)])
        answers[version] = answer["result"]
    accepted = [v for v, result in answers.items() if result["protocolVersion"] == v]
    fallback = answers[UNKNOWN_VERSION]["protocolVersion"]
    common = {k: v for k, v in answers[fallback].items() if k != "protocolVersion"}
    for result in answers.values():  # the version is the only thing negotiation changes
        assert {k: v for k, v in result.items() if k != "protocolVersion"} == common
    init, listed, prompts, resources = anyio.run(exchange, server, [
        handshake(fallback), {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "prompts/list"},
        {"jsonrpc": "2.0", "id": 4, "method": "resources/list"}])
    tools = listed["result"].pop("tools")
    assert [t["name"] for t in tools] == [spec.name for spec in TOOLS]
    return {
        "generated_by": "python -m aide_memoire.mcp.listing",
        # The front answers only for this SDK: another one may negotiate differently.
        "sdk": importlib.metadata.version("mcp"),
        "initialize": {"supported": accepted, "fallback": fallback, "result": common},
        "tools_result": listed["result"],
        "prompts_result": prompts["result"],
        "resources_result": resources["result"],
        "tools": [{"part": spec.part, "tool": tool} for spec, tool in zip(TOOLS, tools,
                                                                           strict=True)],
    }


def main() -> None:
    json.dump(generate(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
