"""Raw JSON-RPC lines over a real stdio server: every request gets an answer, bad times and
nesting get clear tool errors, and the server keeps serving after each."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


class Wire:
    def __init__(self, home: Path) -> None:
        env = {**os.environ, "AIDE_MEMOIRE_HOME": str(home),
               "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "aide_memoire.cli.main", "serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 60) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "no answer from the server"
        found: dict[str, Any] = json.loads(self.proc.stdout.readline())
        return found

    def call(self, request_id: int, name: str, arguments: str) -> str:
        return ('{"jsonrpc":"2.0","id":' + str(request_id) + ',"method":"tools/call",'
                '"params":{"name":"' + name + '","arguments":' + arguments + "}}")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


@pytest.fixture
def wire(tmp_path: Path) -> Any:
    w = Wire(tmp_path / "home")
    w.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}))
    assert w.answer()["id"] == 0
    w.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    yield w
    w.close()


def _tool_error(answer: dict[str, Any]) -> str:
    assert answer["result"]["isError"] is True
    return str(answer["result"]["content"][0]["text"])


def test_unparseable_lines_get_error_answers(wire: Wire) -> None:
    wire.send(wire.call(1, "memory_store", '{"content":"bad \\ud800 text"}'))
    surrogate = wire.answer()
    assert surrogate["id"] == 1 and surrogate["error"]["code"] == -32700
    deep = '{"a":' * 3000 + "1" + "}" * 3000
    wire.send(wire.call(2, "memory_store", '{"content":"deep","metadata":' + deep + "}"))
    nested = wire.answer()
    assert nested["id"] == 2 and nested["error"]["code"] == -32700
    wire.send("this is not json at all")
    assert wire.answer()["error"]["code"] == -32700
    wire.send(wire.call(3, "memory_store", '{"content":"still serving"}'))
    assert wire.answer()["result"]["structuredContent"]["id"]


@pytest.mark.parametrize("when", ['"2024"', "2024", '"0001-01-01"', '"9999-12-31T23:59:59Z"',
                                  "100000000000000000000"])
def test_times_must_be_iso_and_in_range(wire: Wire, when: str) -> None:
    wire.send(wire.call(1, "memory_recall", '{"query":"x","as_of":' + when + "}"))
    text = _tool_error(wire.answer())
    assert "as_of" in text and ("ISO 8601" in text or "outside the years" in text)
    wire.send(wire.call(2, "memory_store", '{"content":"c","observed_at":' + when + "}"))
    assert "observed_at" in _tool_error(wire.answer())
    wire.send(wire.call(3, "memory_recall", '{"query":"x","as_of":"2024-06-01"}'))
    assert wire.answer()["result"]["isError"] is False


def test_deep_metadata_that_parses_is_refused_by_the_engine(wire: Wire) -> None:
    deep = '{"a":' * 60 + "1" + "}" * 60
    wire.send(wire.call(1, "memory_store", '{"content":"deep","metadata":' + deep + "}"))
    assert "nested more than" in _tool_error(wire.answer())
