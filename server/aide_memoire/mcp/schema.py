"""Compact JSON schemas for ``tools/list``: what every client reads into its context.

pydantic's schemas repeat what a model needs no telling: a title per field (the field's
own name, capitalised), ``anyOf [X, {"type": "null"}]`` with ``default: null`` for every
optional field (``"type": [X, "null"]`` says it), and in output schemas, descriptions
and nested shapes of the structured result that the text content already presents.
Input schemas keep types, bounds, patterns, enums, required fields and descriptions
(``minLength: 1`` aside: an empty string is refused with a clear error all the same);
output schemas keep their top-level fields' types (an array of objects is an array: the
text content shows its items). A parameter description said once elsewhere (``shared``:
the namespace's, in the server's instructions) is left out. Every tool stays typed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["compact_schema", "shallow_schema"]

_NAMED = ("properties", "$defs", "patternProperties")  # maps of names to schemas


def compact_schema(schema: dict[str, Any], *, descriptions: bool = True,
                   shared: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A copy of ``schema`` without titles and null branches (and, with ``descriptions``
    false, without descriptions); a top-level parameter named in ``shared`` loses its
    description when it is that one."""
    out: dict[str, Any] = _node(schema, descriptions)
    for name, text in (shared or {}).items():
        prop = out.get("properties", {}).get(name)
        if isinstance(prop, dict) and prop.get("description") == text:
            del prop["description"]
    return out


def shallow_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An output schema typed to its top-level fields: nested objects stay ``object``
    (their shape is in docs/tools.md and in each result), without descriptions."""
    top = compact_schema(schema, descriptions=False)
    top.pop("required", None)
    for sub in top.get("properties", {}).values():
        for key in ("default", "format", "enum"):  # a result carries every field, checked
            sub.pop(key, None)
    top.pop("$defs", None)
    top["properties"] = {name: _flat(sub) for name, sub in top.get("properties", {}).items()}
    return top


def _flat(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    if "$ref" in node or node.get("type") == "object":
        return {"type": "object"}
    if node.get("type") == "array":
        items = _flat(node.get("items", {}))
        if items == {"type": "object"}:
            return {k: v for k, v in node.items() if k != "items"}
        return {**node, "items": items}
    if "anyOf" in node:
        return {**node, "anyOf": [_flat(b) for b in node["anyOf"]]}
    return node


def _node(node: Any, descriptions: bool) -> Any:
    if isinstance(node, list):
        return [_node(item, descriptions) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" or (key == "description" and not descriptions):
            continue
        if (key == "default" and value is None) or (key == "minLength" and value == 1):
            continue
        if key == "additionalProperties" and value is True:  # JSON Schema's own default
            continue
        if key in _NAMED and isinstance(value, dict):
            out[key] = {name: _node(sub, descriptions) for name, sub in value.items()}
        else:
            out[key] = _node(value, descriptions)
    branches = out.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        (kept,) = [b for b in branches if b != {"type": "null"}]
        if isinstance(kept, dict) and isinstance(kept.get("type"), str):
            # One branch, nullable: {"type": ["string", "null"]} says it in a few bytes.
            del out["anyOf"]
            out = {**kept, **out, "type": [kept["type"], "null"]}
    return out
