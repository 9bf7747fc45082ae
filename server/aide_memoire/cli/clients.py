"""Every MCP client ``aide-memoire setup`` knows, in one table: where its config lives,
the file's format, the key that holds MCP servers, and the shape of one entry.

``setup`` writes from this table, docs/clients.md's snippets are generated from it
(``python -m aide_memoire.cli.clients docs/clients.md`` rewrites the generated part;
tests/cli/test_setup.py fails while it is stale), and the tests check each client's
file against the same rows, with the real client where one installs here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .configfile import Format

__all__ = ["CLIENTS", "SERVER_NAME", "Client", "Launch", "Where", "client_by_id", "launch_for",
           "render_docs"]

SERVER_NAME = "aide-memoire"
DESKTOP_NAMESPACE = "user:me"  # Claude Desktop has no project folder to take one from


@dataclass(frozen=True)
class Launch:
    """How a client starts the server: the command, its arguments and extra environment."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str]


@dataclass(frozen=True)
class Where:
    """The user's folders a config path is built from (given, so tests use a temporary
    HOME and any platform)."""

    home: Path
    platform: str = sys.platform
    environ: Mapping[str, str] | None = None

    def env(self, name: str) -> str | None:
        return (os.environ if self.environ is None else self.environ).get(name) or None

    def config(self) -> Path:
        """The per-user settings folder: XDG on Linux, Application Support on macOS,
        %APPDATA% on Windows."""
        if self.platform == "darwin":
            return self.home / "Library" / "Application Support"
        if self.platform.startswith("win"):
            return Path(self.env("APPDATA") or self.home / "AppData" / "Roaming")
        return Path(self.env("XDG_CONFIG_HOME") or self.home / ".config")


Shape = Callable[[Launch], dict[str, Any]]


def _command_args_env(launch: Launch) -> dict[str, Any]:
    return {"command": launch.command, "args": list(launch.args), "env": dict(launch.env)}


def _typed_stdio(launch: Launch) -> dict[str, Any]:
    return {"type": "stdio", **_command_args_env(launch)}


def _zed(launch: Launch) -> dict[str, Any]:
    return {"source": "custom", **_command_args_env(launch)}


def _opencode(launch: Launch) -> dict[str, Any]:
    return {"type": "local", "command": [launch.command, *launch.args], "enabled": True,
            "environment": dict(launch.env)}


@dataclass(frozen=True)
class Client:
    id: str  # the argument of `aide-memoire setup`
    name: str
    fmt: Format
    key: tuple[str, ...]  # where MCP servers are kept in the file
    shape: Shape
    user: Callable[[Where], Path] | None  # the per-user file; None: project only
    project: str | None  # the file inside a project folder; None: user only
    user_doc: str  # the per-user path as the docs show it
    check: str  # how a person checks it worked
    # Whether the client starts servers in the project folder: if not (Claude Desktop),
    # a per-user entry names a namespace, since the server cannot tell the project.
    in_project: bool = True

    def path(self, where: Where, project: Path | None) -> Path:
        if project is not None:
            if self.project is None:
                raise ValueError(f"{self.name} has no per-project config; leave out --project")
            return project / self.project
        if self.user is None:
            raise ValueError(f"{self.name} is set up per project: add --project [FOLDER]")
        return self.user(where)


def _codex_home(where: Where) -> Path:
    return Path(where.env("CODEX_HOME") or where.home / ".codex") / "config.toml"


def _desktop(where: Where) -> Path:
    return where.config() / "Claude" / "claude_desktop_config.json"


CLIENTS: tuple[Client, ...] = (
    Client("codex", "Codex CLI", "toml", ("mcp_servers",), _command_args_env,
           _codex_home, None, "~/.codex/config.toml ($CODEX_HOME)",
           "`codex mcp list` lists `aide-memoire` (enabled)"),
    Client("gemini", "Gemini CLI", "jsonc", ("mcpServers",), _command_args_env,
           lambda w: w.home / ".gemini" / "settings.json", ".gemini/settings.json",
           "~/.gemini/settings.json", "`gemini mcp list` shows `aide-memoire ... - Connected`"),
    Client("vscode", "VS Code", "jsonc", ("servers",), _typed_stdio,
           lambda w: w.config() / ("Code/User/mcp.json"), ".vscode/mcp.json",
           "the profile's `mcp.json` (Linux `~/.config/Code/User/mcp.json`)",
           "Command Palette → MCP: List Servers shows `aide-memoire` running"),
    Client("cursor", "Cursor", "json", ("mcpServers",), _command_args_env,
           lambda w: w.home / ".cursor" / "mcp.json", ".cursor/mcp.json", "~/.cursor/mcp.json",
           "Cursor Settings → MCP lists `aide-memoire` with its tools"),
    Client("windsurf", "Windsurf", "json", ("mcpServers",), _command_args_env,
           lambda w: w.home / ".codeium" / "windsurf" / "mcp_config.json", None,
           "~/.codeium/windsurf/mcp_config.json",
           "Windsurf Settings → Cascade → MCP servers lists `aide-memoire` (refresh)"),
    Client("zed", "Zed", "jsonc", ("context_servers",), _zed,
           lambda w: w.config() / "zed" / "settings.json", ".zed/settings.json",
           "~/.config/zed/settings.json",
           "the Agent Panel's settings show `aide-memoire` with a green dot"),
    Client("opencode", "OpenCode", "jsonc", ("mcp",), _opencode,
           lambda w: w.config() / "opencode" / "opencode.json", "opencode.json",
           "~/.config/opencode/opencode.json",
           "`opencode mcp list` shows `aide-memoire connected`"),
    Client("claude-desktop", "Claude Desktop", "json", ("mcpServers",), _command_args_env,
           _desktop, None,
           "`~/Library/Application Support/Claude/claude_desktop_config.json` (macOS), "
           "`%APPDATA%\\Claude\\claude_desktop_config.json` (Windows)",
           "restart Claude Desktop; the tools appear under the tools icon",
           in_project=False),
    Client("claude-code", "Claude Code", "json", ("mcpServers",), _typed_stdio,
           lambda w: w.home / ".claude.json", ".mcp.json", "~/.claude.json",
           "`claude mcp get aide-memoire` says `✔ Connected`"),
)


def client_by_id(client_id: str) -> Client | None:
    return next((c for c in CLIENTS if c.id == client_id), None)


def launch_for(client: Client, *, project: Path | None, namespace: str | None,
               home: Path | None, command: str) -> Launch:
    """The command line and environment ``client`` will start the server with."""
    from ..engine.core.projects import project_namespace
    from ..engine.core.validate import validate_namespace

    if namespace is not None:
        namespace = validate_namespace(namespace)
    elif project is not None:  # named, so that moving the client's cwd changes nothing
        namespace = project_namespace(project)
    elif not client.in_project:
        namespace = DESKTOP_NAMESPACE
    args = ("serve",) if namespace is None else ("serve", "--namespace", namespace)
    env = {} if home is None else {"AIDE_MEMOIRE_HOME": str(home.expanduser().resolve())}
    return Launch(command, args, env)


# --- docs/clients.md ---------------------------------------------------------------

BEGIN = "<!-- generated by `python -m aide_memoire.cli.clients docs/clients.md`: begin -->"
END = "<!-- generated: end -->"
EXAMPLE_COMMAND = "/home/me/.local/bin/aide-memoire"


def _snippet(client: Client) -> str:
    from .configfile import merge

    launch = launch_for(client, project=None, namespace=None, home=None, command=EXAMPLE_COMMAND)
    text = merge("", client.fmt, client.key, SERVER_NAME, client.shape(launch)).text
    return f"```{'toml' if client.fmt == 'toml' else 'json'}\n{text.rstrip()}\n```"


def render_docs() -> str:
    """The generated part of docs/clients.md: the table, then one snippet per client."""
    lines = [BEGIN, "", "| client | `aide-memoire setup ...` | per user | per project | check |",
             "|---|---|---|---|---|"]
    for c in CLIENTS:
        project = f"`{c.project}`" if c.project else "-"
        user = (c.user_doc if "`" in c.user_doc else f"`{c.user_doc}`") if c.user else "-"
        lines.append(f"| {c.name} | `{c.id}` | {user} | {project} "
                     f"| {c.check} |")
    for c in CLIENTS:
        lines += ["", f"### {c.name}", "", f"`aide-memoire setup {c.id}` writes:", "",
                  _snippet(c)]
    return "\n".join([*lines, "", END])


def rewrite_docs(text: str) -> str:
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return head + render_docs() + tail


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.write_text(rewrite_docs(target.read_text(encoding="utf-8")), encoding="utf-8")
