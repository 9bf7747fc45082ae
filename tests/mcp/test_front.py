"""The stdio front (mcp/front.py): its early answers are the real server's, every line
still reaches the SDK in order, and no request is answered twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import anyio
import pytest
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

from aide_memoire import Memory, Settings
from aide_memoire.mcp.edge import LazyMemory, ServeSettings
from aide_memoire.mcp.front import LISTING, SENTINEL, Front, sdk_matches
from aide_memoire.mcp.listing import exchange, generate, handshake
from aide_memoire.mcp.server import build_server
from aide_memoire.mcp.stdio import run_on_lines

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": "list", "method": "tools/list"}


def _unopened() -> Memory:
    raise AssertionError("the handshake must not open the store")


def test_listing_json_is_what_the_server_answers_now() -> None:
    assert json.loads(LISTING.read_text(encoding="utf-8")) == generate(), (
        "mcp/listing.json is stale: run `python -m aide_memoire.mcp.listing > "
        "server/aide_memoire/mcp/listing.json`"
    )


def test_the_front_answers_only_for_the_sdk_the_listing_was_taken_from() -> None:
    listing = json.loads(LISTING.read_text(encoding="utf-8"))
    assert sdk_matches(listing)
    assert not sdk_matches({**listing, "sdk": "0.0.1"})


class Pipes:
    """A front on two real pipes, as it runs on the process's stdin and stdout."""

    def __init__(self) -> None:
        into_r, self._into_w = os.pipe()
        self._out_r, out_w = os.pipe()
        self.reader: BinaryIO = os.fdopen(self._out_r, "rb")
        self.writer: BinaryIO = os.fdopen(self._into_w, "wb")
        listing = json.loads(LISTING.read_text(encoding="utf-8"))
        self.front = Front(listing, os.fdopen(into_r, "rb"), os.fdopen(out_w, "wb"))
        self.front.start()

    def send(self, *messages: dict[str, Any] | str) -> None:
        for message in messages:
            line = message if isinstance(message, str) else json.dumps(message)
            self.writer.write(line.encode() + b"\n")
        self.writer.flush()

    def answer(self) -> Any:
        return json.loads(self.reader.readline())

    def close(self) -> None:
        if not self.writer.closed:
            self.writer.close()
        self.front.close()
        self.reader.close()


@pytest.fixture
def pipes() -> Iterator[Pipes]:
    opened = Pipes()
    yield opened
    opened.close()


@pytest.mark.parametrize("version", [*KNOWN_PROTOCOL_VERSIONS, "2099-12-31", "draft"])
def test_early_answers_equal_the_sdk_servers(pipes: Pipes, version: str) -> None:
    """For every protocol version a client may ask for, the front's initialize and
    tools/list answers are the ones the SDK server gives to the same lines."""
    messages = [handshake(version, request_id=7), INITIALIZED, LIST]
    pipes.send(*messages)
    early = [pipes.answer(), pipes.answer()]
    server = build_server(LazyMemory(_unopened))
    assert early == anyio.run(exchange, server, messages)
    assert pipes.front.answered == 2


def test_the_sdk_takes_over_every_line_in_order_and_nothing_is_answered_twice(
    pipes: Pipes, tmp_path: Path,
) -> None:
    store = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "memory_store", "arguments": {"content": "deploys on Tuesdays"}}}
    pipes.send(handshake("2025-06-18", request_id=1), INITIALIZED, LIST, store,
               '{"jsonrpc": "2.0", "id": 4, "method": ')
    first = pipes.answer()
    assert first["id"] == 1 and first["result"]["protocolVersion"] == "2025-06-18"
    assert pipes.answer()["id"] == "list"
    opened: list[Memory] = []

    def open_store() -> Memory:
        memory = Memory(settings=Settings(home=tmp_path / "home", embedding_model="none"))
        opened.append(memory)
        return memory

    lazy = LazyMemory(open_store)
    server = build_server(lazy, ServeSettings(default_namespace="project:front"))

    async def serve() -> list[Any]:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run_on_lines, server, pipes.front.take_over(),
                             pipes.front.write_line)
            answers = [await anyio.to_thread.run_sync(pipes.answer) for _ in range(2)]
            pipes.send({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
            answers.append(await anyio.to_thread.run_sync(pipes.answer))
            pipes.writer.close()  # EOF: the session ends
        return answers

    try:
        first_two, listed = (lambda a: (a[:2], a[2]))(anyio.run(serve))
        # The broken line is answered at once, the store call once the store has opened.
        bad, stored = sorted(first_two, key=lambda answer: "result" in answer)
        # The SDK saw the handshake (the server knows tools were listed) but its answers
        # to ids 1 and "list" were dropped: the next lines are the tool call's and the
        # broken line's, then the SDK's own answer to a later tools/list.
        assert server.tools_listed.is_set()
        assert stored["id"] == 3 and stored["result"]["structuredContent"]["namespace"] == (
            "project:front")
        assert bad["error"]["code"] == -32700 and bad["id"] == 4
        assert listed["id"] == 5 and len(listed["result"]["tools"]) == len(server.definitions)
        assert pipes.front.answered == 2
        assert len(opened) == 1
        assert [r.content for r in opened[0].search(namespace="project:front")] == [
            "deploys on Tuesdays"]
    finally:
        lazy.close()


def test_a_malformed_handshake_is_left_to_the_sdk(pipes: Pipes) -> None:
    bad = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    pipes.send(bad, LIST)
    lines = [pipes.front._lines.get(timeout=10) for _ in range(2)]
    assert [json.loads(line)["id"] for line in lines if line] == [1, "list"]
    assert SENTINEL not in "".join(line or "" for line in lines)
    assert pipes.front.answered == 0


def test_the_front_imports_neither_the_sdk_nor_pydantic_nor_the_engine() -> None:
    code = ("import sys, aide_memoire.mcp.front; "
            "print(sorted(m for m in ('mcp', 'pydantic', 'numpy',"
            " 'aide_memoire.engine.facade.memory')"
            " if m in sys.modules))")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={**os.environ})
    assert found.stdout.strip() == "[]"
