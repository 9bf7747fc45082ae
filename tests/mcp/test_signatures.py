"""The tools' contract, frozen: names, parameters (type, required), annotations, and
what ``tools/list`` costs a client's context. A change here is an API decision: update
tool_signatures.json on purpose (``python tests/mcp/test_signatures.py > ...``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.types import ListToolsResult

from aide_memoire import Memory, Settings
from aide_memoire.mcp.server import build_server

FROZEN = Path(__file__).with_name("tool_signatures.json")
MAX_BYTES = 25_000  # the tools/list answer as sent (compact JSON)


def _typed(prop: dict[str, Any]) -> Any:
    if "type" in prop:
        return prop["type"]
    if "enum" in prop:
        return {"enum": prop["enum"]}
    if "$ref" in prop:
        return prop["$ref"].rsplit("/", 1)[-1]
    raise AssertionError(f"untyped parameter schema: {prop}")


def signatures(home: Path) -> tuple[dict[str, Any], int]:
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        tools = anyio.run(build_server(memory).list_tools)
    listed = ListToolsResult(tools=tools).model_dump(by_alias=True, exclude_none=True,
                                                     mode="json")
    size = len(json.dumps({"jsonrpc": "2.0", "id": 2, "result": listed},
                          separators=(",", ":")).encode())
    out: dict[str, Any] = {}
    for tool in listed["tools"]:
        schema = tool["inputSchema"]
        required = set(schema.get("required", []))
        out[tool["name"]] = {
            "params": {name: {"type": _typed(prop), "required": name in required}
                       for name, prop in schema["properties"].items()},
            "output": sorted(tool["outputSchema"]["properties"]),
            "annotations": tool["annotations"],
        }
    return out, size


def test_tool_signatures_are_frozen(tmp_path: Path) -> None:
    found, _ = signatures(tmp_path / "home")
    assert found == json.loads(FROZEN.read_text(encoding="utf-8")), (
        "the tools' signatures changed: if that is intended, regenerate "
        "tests/mcp/tool_signatures.json"
    )


def test_tools_list_stays_small_and_every_tool_typed_and_annotated(tmp_path: Path) -> None:
    found, size = signatures(tmp_path / "home")
    assert size <= MAX_BYTES, f"tools/list is {size} bytes (budget {MAX_BYTES})"
    for name, tool in found.items():
        assert tool["output"], f"{name} has no typed output"
        assert "readOnlyHint" in tool["annotations"] and "openWorldHint" in tool["annotations"]


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        print(json.dumps(signatures(Path(folder) / "home")[0], indent=1, sort_keys=True))
    sys.exit(0)
