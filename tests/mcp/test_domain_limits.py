"""The limits of a memory's fields are declared once (engine/core/domain.py): the schemas the
MCP tools publish and the engine's own checks both say exactly those numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aide_memoire import InvalidContent, InvalidInput, InvalidNamespace, Memory, Settings
from aide_memoire.engine.core import domain as d
from aide_memoire.engine.core import validate as v
from aide_memoire.mcp.registry import TOOLS
from aide_memoire.mcp.server import tool_definition

SCHEMAS = {spec.name: tool_definition(spec).input_schema for spec in TOOLS}


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    return dict(schema.get("properties", {}))


def _turn(schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema["properties"]["turns"]["items"]["$ref"].rsplit("/", 1)[-1]
    return dict(schema["$defs"][ref])


def test_every_namespace_and_tag_parameter_has_the_domains_bounds() -> None:
    namespaces = tags = 0
    for schema in SCHEMAS.values():
        props = _properties(schema)
        if "namespace" in props:
            namespaces += 1
            assert props["namespace"]["maxLength"] == d.NAMESPACE_MAX
            assert props["namespace"]["pattern"] == d.NAMESPACE_PATTERN
        if "tags" in props:
            tags += 1
            assert props["tags"]["maxItems"] == d.TAGS_MAX
            assert props["tags"]["items"]["maxLength"] == d.TAG_MAX
            assert props["tags"]["items"]["pattern"] == d.TAG_PATTERN
    assert namespaces >= 10 and tags >= 3


def test_content_ids_labels_queries_and_limits_have_the_domains_bounds() -> None:
    store = _properties(SCHEMAS["memory_store"])
    assert store["content"]["maxLength"] == d.CONTENT_MAX_BYTES
    assert (store["importance"]["minimum"], store["importance"]["maximum"]) == (
        d.IMPORTANCE_MIN, d.IMPORTANCE_MAX)
    assert store["importance"]["default"] == d.IMPORTANCE_DEFAULT
    assert store["kind"]["enum"] == list(d.STORE_KINDS)
    assert store["source"]["maxLength"] == d.FIELD_MAX
    assert store["supersedes"]["maxLength"] == d.ID_MAX

    conversation = SCHEMAS["memory_store_conversation"]
    turn = _turn(conversation)
    assert turn["properties"]["content"]["maxLength"] == d.CONTENT_MAX_BYTES
    assert turn["properties"]["speaker"]["maxLength"] == d.FIELD_MAX
    assert conversation["properties"]["turns"]["maxItems"] == d.TURNS_MAX
    assert conversation["properties"]["session_id"]["maxLength"] == d.FIELD_MAX

    for name in ("memory_recall", "memory_search"):
        props = _properties(SCHEMAS[name])
        assert props["limit"]["maximum"] == d.RESULTS_MAX
        assert props["kinds"]["items"]["enum"] == list(d.KINDS)
    assert _properties(SCHEMAS["memory_recall"])["query"]["maxLength"] == d.QUERY_MAX
    search = _properties(SCHEMAS["memory_search"])
    assert (search["min_importance"]["minimum"], search["min_importance"]["maximum"]) == (
        d.IMPORTANCE_MIN, d.IMPORTANCE_MAX)
    for name in ("memory_get", "memory_forget", "memory_feedback"):
        assert _properties(SCHEMAS[name])["id"]["maxLength"] == d.ID_MAX


def test_the_engine_checks_the_same_numbers(tmp_path: Path) -> None:
    assert Settings(home=tmp_path).max_content_bytes == d.CONTENT_MAX_BYTES
    # Bytes, not characters: 'é' is two bytes in UTF-8.
    v.validate_content("é" * (d.CONTENT_MAX_BYTES // 2), max_bytes=d.CONTENT_MAX_BYTES)
    with pytest.raises(InvalidContent, match="bytes"):
        v.validate_content("é" * (d.CONTENT_MAX_BYTES // 2 + 1), max_bytes=d.CONTENT_MAX_BYTES)
    v.validate_namespace("n" * d.NAMESPACE_MAX)
    with pytest.raises(InvalidNamespace):
        v.validate_namespace("n" * (d.NAMESPACE_MAX + 1))
    assert len(v.validate_tags([f"t{i}" for i in range(d.TAGS_MAX)])) == d.TAGS_MAX
    with pytest.raises(InvalidInput):
        v.validate_tags([f"t{i}" for i in range(d.TAGS_MAX + 1)])
    with pytest.raises(InvalidInput):
        v.validate_tags(["t" * (d.TAG_MAX + 1)])
    v.validate_id("i" * d.ID_MAX)
    with pytest.raises(InvalidInput):
        v.validate_id("i" * (d.ID_MAX + 1))
    with pytest.raises(InvalidInput):
        v.validate_importance(d.IMPORTANCE_MAX + 0.01)
    with Memory(settings=Settings(home=tmp_path / "home", embedding_model="none")) as memory:
        memory.store("one memory to recall", namespace="n")
        assert len(memory.recall("memory", namespace="n", limit=d.RESULTS_MAX)) == 1
        assert len(memory.search(namespace="n", limit=d.RESULTS_MAX)) == 1
        with pytest.raises(InvalidInput, match=str(d.RESULTS_MAX)):
            memory.recall("memory", namespace="n", limit=d.RESULTS_MAX + 1)
        with pytest.raises(InvalidInput, match=str(d.RESULTS_MAX)):
            memory.search(namespace="n", limit=d.RESULTS_MAX + 1)
