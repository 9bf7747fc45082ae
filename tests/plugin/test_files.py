"""The client files parse, carry the front matter their client needs, and say one thing
in one place (version, prompt text, default store)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from aide_memoire import __version__
from aide_memoire.mcp.prompts import load_prompts, render_prompt

from .conftest import PLUGIN, REPO, front_matter

JSON_FILES = [
    *sorted(p for p in PLUGIN.rglob("*.json")),
    REPO / ".claude-plugin" / "marketplace.json",
    REPO / "mcp_config.example.json",
]
COMMANDS = sorted((PLUGIN / "commands").glob("*.md")) + sorted((PLUGIN / "prompts").glob("*.md"))
SKILLS = sorted((REPO / "skills").glob("*/SKILL.md"))
TOOL_PREFIX = "mcp__plugin_aide-memoire_aide-memoire__"


@pytest.mark.parametrize("path", JSON_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_json_file_parses(path: Path) -> None:
    assert isinstance(json.loads(path.read_text(encoding="utf-8")), dict)


def test_versions_follow_the_package() -> None:
    plugin = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert plugin["version"] == __version__
    entry = next(p for p in market["plugins"] if p["name"] == plugin["name"])
    assert entry["version"] == __version__ and market["metadata"]["version"] == __version__
    assert entry["source"] == "./plugin"
    for key in ("name", "version", "description", "author", "homepage", "license", "keywords"):
        assert plugin.get(key), key


def test_the_plugin_server_uses_the_shared_store_and_the_project() -> None:
    server = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["aide-memoire"]
    assert server["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/aide-memoire-mcp"
    assert server.get("args", []) == []
    # No store override: the plugin shares the user data folder with every other client.
    assert "AIDE_MEMOIRE_HOME" not in json.dumps(server)
    assert os.access(PLUGIN / "bin" / "aide-memoire-mcp", os.X_OK)


def test_desktop_example_runs_serve() -> None:
    example = json.loads((REPO / "mcp_config.example.json").read_text())
    server = example["mcpServers"]["aide-memoire"]
    assert server["command"] == "aide-memoire" and server["args"][0] == "serve"
    assert "--namespace" in server["args"]


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: p.name)
def test_commands_have_a_description_and_name_real_tools(path: Path) -> None:
    meta = front_matter(path)
    assert isinstance(meta.get("description"), str) and len(str(meta["description"])) > 20
    tools = [t.strip() for t in str(meta.get("allowed-tools", "")).split(",") if t.strip()]
    from aide_memoire.mcp.registry import TOOLS

    names = {spec.name for spec in TOOLS}
    for tool in tools:
        assert tool.startswith(TOOL_PREFIX) and tool.removeprefix(TOOL_PREFIX) in names, tool
    if "argument-hint" in meta:
        assert "$ARGUMENTS" in path.read_text(encoding="utf-8"), path.name


@pytest.mark.parametrize("path", SKILLS, ids=lambda p: p.parent.name)
def test_skills_have_name_and_description(path: Path) -> None:
    meta = front_matter(path)
    assert meta.get("name") == path.parent.name
    assert isinstance(meta.get("description"), str) and len(str(meta["description"])) > 50
    # Claude Code caps a skill description at 1024 characters.
    assert len(str(meta["description"])) <= 1024


def test_the_skills_cover_storing_recalling_and_reviewing() -> None:
    names = {p.parent.name for p in SKILLS}
    assert {"storing-memory", "recalling-memory", "reviewing-memory"} <= names
    assert (PLUGIN / "skills").resolve() == (REPO / "skills").resolve()
    storing = (REPO / "skills" / "storing-memory" / "SKILL.md").read_text()
    assert "Secrets, ever" in storing


def test_slash_commands_and_mcp_prompts_are_one_text() -> None:
    package = {p.name: p for p in load_prompts()}
    for name in ("review-memory", "memory-hygiene"):
        command = PLUGIN / "prompts" / f"{name}.md"
        assert command.is_file(), command
        # The plugin's folder is a link to the package's prompts: the same file.
        assert command.resolve() == (REPO / "server" / "aide_memoire" / "prompts" /
                                     f"{name}.md").resolve()
        assert command.read_text(encoding="utf-8").endswith(package[name].body)
    commands = {p.stem for p in (PLUGIN / "commands").glob("*.md")}
    assert not commands & set(package), "a prompt copied into commands/ would be a second text"


def test_the_mcp_prompt_fills_the_namespace_where_claude_code_puts_its_arguments() -> None:
    review = next(p for p in load_prompts() if p.name == "review-memory")
    text = render_prompt(review, "project:shop")
    assert "$ARGUMENTS" not in text and "Namespace named by the person: `project:shop`" in text
    assert "Namespace named by the person: (none)" in render_prompt(review)
