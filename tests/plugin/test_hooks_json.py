"""plugin/hooks/hooks.json: the five events with explicit timeouts. The prompt hook is an
``mcp_tool`` hook on the plugin's own MCP server (no process per prompt); the others run
the plugin's hook launcher in exec form (no shell command line); capture detached."""

from __future__ import annotations

import json
import os

from aide_memoire.mcp.hooks import HookPromptInput
from aide_memoire.mcp.registry import TOOLS, UNLISTED

from .conftest import PLUGIN, REPO

HOOKS = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
EVENTS = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt-submit",
          "Stop": "stop", "PreCompact": "pre-compact", "SessionEnd": "session-end"}
CAPTURE = {"Stop", "PreCompact", "SessionEnd"}


def _only_hook(event: str) -> dict[str, object]:
    groups = HOOKS[event]
    assert len(groups) == 1 and len(groups[0]["hooks"]) == 1, groups
    hook: dict[str, object] = groups[0]["hooks"][0]
    return hook


def test_command_events_run_the_launcher_in_exec_form() -> None:
    assert set(HOOKS) == set(EVENTS)
    for event, name in EVENTS.items():
        if event == "UserPromptSubmit":
            continue
        hook = _only_hook(event)
        assert hook["type"] == "command"
        # Exec form: Claude Code spawns the program with these arguments, no shell parses
        # a command line (paths with spaces or quotes are safe).
        assert hook["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/aide-memoire-hook", hook
        args = hook["args"]
        assert isinstance(args, list) and args[-1] == name, hook
        assert (args[0] == "--detach") == (event in CAPTURE), hook


def test_the_prompt_hook_calls_the_plugins_own_server_by_an_unlisted_tool() -> None:
    hook = _only_hook("UserPromptSubmit")
    assert hook["type"] == "mcp_tool"
    plugin = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())["name"]
    (server,) = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]
    # Claude Code names a plugin's server plugin:<plugin>:<server>.
    assert hook["server"] == f"plugin:{plugin}:{server}"
    assert hook["tool"] in {spec.name for spec in UNLISTED}
    assert hook["tool"] not in {spec.name for spec in TOOLS}
    given = hook["input"]
    assert isinstance(given, dict)
    assert given == {"prompt": "${prompt}", "session_id": "${session_id}"}
    assert set(given) <= set(HookPromptInput.model_fields)


def test_timeouts_are_explicit_and_short_where_the_person_waits() -> None:
    for event in EVENTS:
        timeout = _only_hook(event)["timeout"]
        assert isinstance(timeout, int | float) and 0 < timeout <= 60, (event, timeout)
    # The prompt hook runs before every prompt: a slow one is cut off and the prompt goes on.
    # Warm it answers in milliseconds; the limit covers a first prompt sent while the
    # session's server is still starting on a loaded machine (docs/hooks.md).
    assert _only_hook("UserPromptSubmit")["timeout"] <= 30  # type: ignore[operator]
    # Capture hands its work to a detached process, so Claude Code's `async` is not used
    # (claude -p 2.1.197 exits before it runs async hooks).
    assert not any(_only_hook(event).get("async") for event in EVENTS)


def test_session_start_covers_every_source() -> None:
    matcher = str(HOOKS["SessionStart"][0]["matcher"])
    assert set(matcher.split("|")) == {"startup", "resume", "clear", "compact"}
    for event in EVENTS.keys() - {"SessionStart"}:
        assert HOOKS[event][0].get("matcher") in (None, "", "*"), event


def test_the_plugin_ships_the_package_source_and_executable_launchers() -> None:
    # What the first-use setup installs from: the package itself, not a copy to drift.
    for name in ("server", "pyproject.toml", "README.md"):
        assert (PLUGIN / "pkg" / name).resolve() == (REPO / name).resolve(), name
    for name in ("aide-memoire-mcp", "aide-memoire-hook"):
        assert os.access(PLUGIN / "bin" / name, os.X_OK), name
    # Nothing in bin/ is called `aide-memoire`: Claude Code may put a plugin's bin/ on
    # PATH, and the launchers look for the user's own `aide-memoire` there.
    assert not (PLUGIN / "bin" / "aide-memoire").exists()
