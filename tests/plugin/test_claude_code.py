"""The plugin and the marketplace as the real Claude Code CLI sees them: they validate
(strict), install from a checkout, expose every command and skill, and the plugin's
server connects."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .conftest import BARE_PATH, REPO, VENV_BIN, Claude


def _checkout() -> dict[str, str]:
    """This checkout's code for the servers Claude Code starts (not the shared install's)."""
    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


def test_plugin_and_marketplace_validate(claude: Claude) -> None:
    plugin = claude("plugin", "validate", "plugin", "--strict", cwd=REPO)
    assert plugin.returncode == 0, plugin.stdout + plugin.stderr
    assert "Validating plugin manifest" in plugin.stdout and "✔ Validation passed" in plugin.stdout
    market = claude("plugin", "validate", ".", "--strict", cwd=REPO)
    assert market.returncode == 0, market.stdout + market.stderr
    assert "Validating marketplace manifest" in market.stdout
    assert "✔ Validation passed" in market.stdout


def test_install_from_the_checkout_and_connect(claude: Claude, tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    store = tmp_path / "store"
    added = claude("plugin", "marketplace", "add", str(REPO), cwd=project)
    assert added.returncode == 0, added.stdout + added.stderr
    assert "Successfully added marketplace: aide-memoire" in added.stdout
    installed = claude("plugin", "install", "aide-memoire@aide-memoire", cwd=project)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    details = claude("plugin", "details", "aide-memoire@aide-memoire", cwd=project)
    assert details.returncode == 0, details.stderr
    line = next(x for x in details.stdout.splitlines() if x.strip().startswith("Skills ("))
    seen = {name.strip() for name in line.split(")", 1)[1].split(",")}
    commands = {p.stem for p in (REPO / "plugin" / "commands").glob("*.md")}
    prompts = {p.stem for p in (REPO / "plugin" / "prompts").glob("*.md")}
    skills = {p.parent.name for p in (REPO / "skills").glob("*/SKILL.md")}
    assert {"review-memory", "memory-status"} <= commands | prompts
    assert commands | prompts | skills == seen
    hooks = next(x for x in details.stdout.splitlines() if x.strip().startswith("Hooks ("))
    assert {
        h.strip() for h in hooks.split(")", 1)[1].split("(")[0].split(",")
    } == {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"}

    listed = claude("mcp", "list", cwd=project, PATH=f"{VENV_BIN}:{BARE_PATH}",
                    AIDE_MEMOIRE_HOME=str(store), AIDE_MEMOIRE_EMBEDDING_MODEL="none",
                    **_checkout())
    line = next((x for x in listed.stdout.splitlines() if x.startswith("plugin:aide-memoire:")),
                "")
    assert line.startswith("plugin:aide-memoire:aide-memoire:"), listed.stdout + listed.stderr
    assert "✔ Connected" in line, listed.stdout + listed.stderr
    # The health check ran the real server on the store the environment named: it made
    # the store's folder at once (the store itself opens at the first tool call).
    assert store.is_dir()

    # A wrong AIDE_MEMOIRE_BIN is an error, not a reason to set up another environment
    # (the launcher's message is in Claude Code's MCP log; tests/plugin/test_launcher.py
    # checks its text). With nothing at all, the plugin sets up its own: tests/e2e.
    wrong = claude("mcp", "list", cwd=project, AIDE_MEMOIRE_HOME=str(store),
                   AIDE_MEMOIRE_BIN=str(tmp_path / "nowhere"))
    assert "plugin:aide-memoire:aide-memoire:" in wrong.stdout
    assert "✘ Failed to connect" in wrong.stdout, wrong.stdout
    assert not (tmp_path / "claude-home" / ".claude" / "plugins" / "data" /
                "aide-memoire-aide-memoire" / "venv").exists()

    # What docs/clients.md tells a user whose PATH lacks the command, or who wants another
    # store: the `env` block of ~/.claude/settings.json reaches the plugin's server.
    settings_file = tmp_path / "claude-home" / ".claude" / "settings.json"
    settings = json.loads(settings_file.read_text())
    assert settings["enabledPlugins"]["aide-memoire@aide-memoire"] is True
    other = tmp_path / "other-store"
    settings["env"] = {"AIDE_MEMOIRE_BIN": str(VENV_BIN / "aide-memoire"),
                       "AIDE_MEMOIRE_HOME": str(other), "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"}
    settings_file.write_text(json.dumps(settings))
    configured = claude("mcp", "list", cwd=project, **_checkout())
    assert "✔ Connected" in configured.stdout, configured.stdout + configured.stderr
    assert other.is_dir()
