"""The registry is the single source: docs/tools.md, agent specs and the server follow it."""

from __future__ import annotations

import re
from pathlib import Path

from aide_memoire.mcp.docs import render_tools_md
from aide_memoire.mcp.prompts import load_prompts
from aide_memoire.mcp.registry import TOOLS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "tools.md"


def test_docs_tools_md_is_generated_from_the_registry() -> None:
    assert DOCS.read_text(encoding="utf-8") == render_tools_md(), (
        "docs/tools.md is stale: run `python -m aide_memoire.mcp.docs > docs/tools.md`"
    )


def test_every_tool_is_named_typed_annotated_and_described() -> None:
    names = [spec.name for spec in TOOLS]
    assert len(set(names)) == len(names)
    for spec in TOOLS:
        assert re.fullmatch(r"memory_[a-z_]+", spec.name)
        assert spec.title and spec.output is not None
        assert not (spec.read_only and spec.destructive)
        assert spec.open_world is False
        # Written for an agent: long enough to say when to use it and what comes back.
        assert len(spec.description) > 150, spec.name
        schema = spec.input.model_json_schema()
        assert schema.get("additionalProperties") is False, spec.name
        for field, prop in schema.get("properties", {}).items():
            assert prop.get("description"), f"{spec.name}.{field} has no description"


def test_prompts_ship_with_the_package() -> None:
    prompts = {p.name: p for p in load_prompts()}
    assert {"review-memory", "memory-hygiene"} <= set(prompts)
    review = prompts["review-memory"]
    assert review.description and "memory_review_decide" in review.body
    assert "Silence is never consent" in review.body
    repo_prompts = Path(__file__).resolve().parents[2] / "prompts"
    assert (repo_prompts / "review-memory.md").read_text(encoding="utf-8").endswith(
        review.body
    )
