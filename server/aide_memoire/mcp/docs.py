"""Generate docs/tools.md from the registry: ``python -m aide_memoire.mcp.docs > docs/tools.md``.

A test regenerates it and compares, so the reference cannot drift from what the server
publishes.
"""

from __future__ import annotations

import json
from typing import Any

from ..engine.core.parts import PARTS
from .prompts import load_prompts
from .registry import TOOLS, ToolSpec

__all__ = ["render_tools_md"]

HEADER = """\
# MCP tool reference

Generated from `server/aide_memoire/mcp/registry.py` by
`python -m aide_memoire.mcp.docs > docs/tools.md`; do not edit by hand
(`tests/mcp/test_registry.py` fails when this file and the registry differ).
See [mcp.md](mcp.md) for how to run the server.

Every memory tool takes an optional `namespace`; without it the server's default
namespace is used (see mcp.md). The code tools take the `root` of a source tree.
Unknown arguments are refused. Every tool returns structured content
matching its output schema; recall, search and get also return a text rendering in which
each memory is quoted data: `<memory id=... kind=... date=... source=...>...</memory>`.
"""


def _type(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in prop:
        return " or ".join(_type(p, defs) for p in prop["anyOf"])
    if "enum" in prop:
        return " \\| ".join(f"`{v}`" for v in prop["enum"])
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list of {_type(prop.get('items', {}), defs)}"
    if prop.get("format") == "date-time":
        return "date-time"
    return str(kind)


def _limits(prop: dict[str, Any]) -> str:
    names = {"minimum": "≥", "maximum": "≤", "minLength": "min length ",
             "maxLength": "max length ", "minItems": "min items ", "maxItems": "max items "}
    parts = [f"{label}{prop[key]}" for key, label in names.items() if key in prop]
    for option in prop.get("anyOf", []):
        parts += [f"{label}{option[key]}" for key, label in names.items() if key in option]
    return ", ".join(parts)


def _params(schema: dict[str, Any]) -> list[str]:
    props: dict[str, Any] = schema.get("properties", {})
    if not props:
        return ["No arguments."]
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    rows = ["| argument | type | required | default | limits | description |",
            "|---|---|---|---|---|---|"]
    for name, prop in props.items():
        default = "" if name in required or "default" not in prop else (
            f"`{json.dumps(prop['default'])}`"
        )
        desc = str(prop.get("description", "")).replace("|", "\\|").replace("\n", " ")
        rows.append(
            f"| `{name}` | {_type(prop, defs)} | {'yes' if name in required else 'no'} "
            f"| {default} | {_limits(prop)} | {desc} |"
        )
    for def_name, sub in sorted(defs.items()):
        if "properties" in sub and def_name not in {"Hit", "MemoryRecord"}:
            rows += ["", f"`{def_name}`:", "", *_params(sub)]
    return rows


def _returns(spec: ToolSpec) -> list[str]:
    schema = spec.output.model_json_schema()
    lines = []
    for name, prop in schema.get("properties", {}).items():
        desc = prop.get("description", "")
        lines.append(f"- `{name}` ({_type(prop, schema.get('$defs', {}))})"
                     + (f": {desc}" if desc else ""))
    return lines


def _hints(spec: ToolSpec) -> str:
    return (f"read-only: {str(spec.read_only).lower()} · destructive: "
            f"{str(spec.destructive).lower()} · idempotent: {str(spec.idempotent).lower()} · "
            f"open-world: {str(spec.open_world).lower()}")


def _extra(spec: ToolSpec) -> str:
    return "-" if spec.part is None else f"`{PARTS[spec.part].extra}`"


def render_tools_md() -> str:
    out = [HEADER, "| tool | title | read-only | destructive | extra |", "|---|---|---|---|---|"]
    out += [f"| [`{s.name}`](#{s.name}) | {s.title} | {'yes' if s.read_only else 'no'} "
            f"| {'yes' if s.destructive else 'no'} | {_extra(s)} |" for s in TOOLS]
    for spec in TOOLS:
        needs = [] if spec.part is None else [
            f"Needs the `{PARTS[spec.part].extra}` extra (`{PARTS[spec.part].install}`); "
            "without it the server does not publish this tool.", ""]
        out += ["", f"## {spec.name}", "", f"**{spec.title}** ({_hints(spec)})", "",
                spec.description, "", *needs, "Arguments:", "",
                *_params(spec.input.model_json_schema()),
                "", f"Returns `{spec.output.__name__}`:", "", *_returns(spec)]
    out += ["", "## Prompts", ""]
    out += [f"- `{p.name}` (argument `namespace`, optional): {p.description}"
            for p in load_prompts()]
    out += ["", "## Resources", "",
            "- `memory://status` (application/json): what the store holds, which recall "
            "stages are live, and the server's default namespace."]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(render_tools_md(), end="")
