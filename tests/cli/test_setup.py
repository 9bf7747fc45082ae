"""`aide-memoire setup CLIENT`: every client's file written, merged and dry-run in a
temporary HOME, and checked against the shape that client's own documentation gives
(written out here, not read from the table under test). The real Codex CLI, Gemini CLI
and Claude Code read these files in tests/mcp/test_real_clients.py."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aide_memoire.cli.clients import CLIENTS, Where, client_by_id, render_docs
from aide_memoire.cli.configfile import ConfigError, Format, merge
from aide_memoire.cli.main import cli
from aide_memoire.engine.core.projects import project_namespace

DOCS = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
COMMAND = "/opt/am/bin/aide-memoire"

# Each client's documented file (per user, per project) and where an stdio server goes,
# with the fields its docs require: (user path under HOME, project path, keys, entry check).
DOCUMENTED: dict[str, tuple[str | None, str | None, tuple[str, ...]]] = {
    "codex": (".codex/config.toml", None, ("mcp_servers",)),
    "gemini": (".gemini/settings.json", ".gemini/settings.json", ("mcpServers",)),
    "vscode": (".config/Code/User/mcp.json", ".vscode/mcp.json", ("servers",)),
    "cursor": (".cursor/mcp.json", ".cursor/mcp.json", ("mcpServers",)),
    "windsurf": (".codeium/windsurf/mcp_config.json", None, ("mcpServers",)),
    "zed": (".config/zed/settings.json", ".zed/settings.json", ("context_servers",)),
    "opencode": (".config/opencode/opencode.json", "opencode.json", ("mcp",)),
    "claude-desktop": (".config/Claude/claude_desktop_config.json", None, ("mcpServers",)),
    "claude-code": (".claude.json", ".mcp.json", ("mcpServers",)),
}


def _launched(client_id: str, entry: dict[str, Any]) -> list[str]:
    """The command line the client will run, read the way its documentation says."""
    if client_id == "opencode":  # {"type": "local", "command": [cmd, *args]}
        assert entry["type"] == "local" and entry["enabled"] is True
        assert isinstance(entry["environment"], dict)
        return list(entry["command"])
    if client_id in ("vscode", "claude-code"):
        assert entry["type"] == "stdio"
    if client_id == "zed":
        assert entry["source"] == "custom"
    assert isinstance(entry["env"], dict)
    return [entry["command"], *entry["args"]]


def _read(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        return tomllib.loads(text)
    # JSONC: drop whole-line comments and trailing commas (the files below use only those).
    text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
    parsed: dict[str, Any] = json.loads(re.sub(r",(\s*[}\]])", r"\1", text))
    return parsed


def _entry(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    for key in keys:
        data = data[key]
    entry: dict[str, Any] = data["aide-memoire"]
    return entry


def setup(home: Path, *args: str, cwd: Path | None = None) -> Any:
    env = {"HOME": str(home), "XDG_CONFIG_HOME": "", "CODEX_HOME": "", "APPDATA": ""}
    result = CliRunner().invoke(cli, ["setup", *args, "--command", COMMAND], env=env,
                                catch_exceptions=False)
    return result


@pytest.mark.parametrize("client_id", [c.id for c in CLIENTS])
def test_setup_writes_each_clients_documented_file(tmp_path: Path, client_id: str) -> None:
    user, project, keys = DOCUMENTED[client_id]
    home = tmp_path / "home"
    if user is not None:
        done = setup(home, client_id, "--json")
        assert done.exit_code == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["path"] == str(home / user) and report["action"] == "added"
        written = _launched(client_id, _entry(_read(home / user), keys))
        assert written[0] == COMMAND and written[1] == "serve"
        # Claude Desktop has no project: its entry names the namespace; the others let
        # the server take the project of the folder the client starts it in.
        assert written[2:] == (["--namespace", "user:me"] if client_id == "claude-desktop"
                               else [])
    else:
        refused = setup(home, client_id)
        assert refused.exit_code == 2 and "--project" in refused.stderr
    folder = tmp_path / "shop"
    folder.mkdir()
    done = setup(home, client_id, "--project", "--dir", str(folder))
    if project is None:
        assert done.exit_code == 2 and "no per-project config" in done.stderr
        return
    assert done.exit_code == 0, done.stderr
    written = _launched(client_id, _entry(_read(folder / project), keys))
    assert written[1:] == ["serve", "--namespace", project_namespace(folder.resolve())]


EXISTING = {
    "jsonc": '{\n    // my editor settings\n    "theme": "One Dark",\n    "KEY": {\n'
             '        "other": {"command": "other-server", "args": []},\n    },\n}\n',
    "json": '{\n  "theme": "One Dark",\n  "KEY": {\n    "other": {"command": "other-server"}\n'
            '  }\n}\n',
    "toml": '# my codex settings\nmodel = "o3"\n\n[KEY.other]\ncommand = "other-server"\n',
}


@pytest.mark.parametrize("client_id", [c.id for c in CLIENTS])
def test_setup_merges_keeping_other_entries_comments_and_a_backup(tmp_path: Path,
                                                                 client_id: str) -> None:
    client = client_by_id(client_id)
    assert client is not None
    home = tmp_path / "home"
    path = client.path(Where(home, platform="linux", environ={}), None
                       if client.user else tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    before = EXISTING[client.fmt].replace("KEY", client.key[0])
    path.write_text(before, encoding="utf-8")
    args = [client_id] if client.user else [client_id, "--project", "--dir", str(tmp_path)]
    done = setup(home, *args)
    assert done.exit_code == 0, done.stderr
    after = path.read_text(encoding="utf-8")
    data = _read(path)
    assert data[client.key[0]]["other"]["command"] == "other-server"
    assert "aide-memoire" in data[client.key[0]]
    if client.fmt != "json":
        assert after.splitlines()[1 if client.fmt == "jsonc" else 0].strip().startswith(
            ("// my editor", "# my codex"))
    # Every line of the old file is still there, in order.
    lines = iter(after.splitlines())
    assert all(any(old == new for new in lines) for old in before.splitlines())
    assert path.with_name(path.name + ".bak").read_text(encoding="utf-8") == before
    # Again: nothing to do, nothing written.
    mtime = path.stat().st_mtime_ns
    again = setup(home, *args)
    assert again.exit_code == 0 and "unchanged" in again.stdout
    assert path.stat().st_mtime_ns == mtime
    # Another namespace replaces our entry only.
    changed = setup(home, *args, "--namespace", "user:alice", "--json")
    report = json.loads(changed.stdout)
    assert report["action"] == "updated" and report["previous"] is not None
    data = _read(path)
    assert "user:alice" in json.dumps(data[client.key[0]]["aide-memoire"])
    assert data[client.key[0]]["other"]["command"] == "other-server"


@pytest.mark.parametrize("client_id", ["codex", "vscode", "claude-desktop"])
def test_dry_run_prints_the_file_and_writes_nothing(tmp_path: Path, client_id: str) -> None:
    home = tmp_path / "home"
    done = setup(home, client_id, "--dry-run")
    assert done.exit_code == 0, done.stderr
    assert "dry run: would add" in done.stderr
    assert COMMAND in done.stdout
    assert not home.exists() or not any(p.is_file() for p in home.rglob("*"))


def test_a_file_that_does_not_parse_is_left_alone_with_the_entry_to_add(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"mcpServers": {"other": {}}, // a comment\n}', encoding="utf-8")
    done = setup(home, "cursor")
    assert done.exit_code == 1
    assert "line 1 has a comment" in done.stderr and "nothing was written" in done.stderr
    assert COMMAND in done.stderr  # the entry, to add by hand
    assert path.read_text(encoding="utf-8").endswith("// a comment\n}")
    path.write_text('{"mcpServers": ["not", "an object"]}', encoding="utf-8")
    done = setup(home, "cursor")
    assert done.exit_code == 1 and "'mcpServers' is not an object" in done.stderr


def test_a_bad_namespace_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    done = setup(tmp_path / "home", "gemini", "--namespace", "../etc")
    assert done.exit_code == 2 and "namespace" in done.stderr
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize(("text", "expected"), [
    ("", {"s": {"aide-memoire": {"x": 1}}}),
    ("{}", {"s": {"aide-memoire": {"x": 1}}}),
    ('{"s": {}}', {"s": {"aide-memoire": {"x": 1}}}),
    ('{"a": "/* not a comment */", "s": {"b": 2}}',
     {"a": "/* not a comment */", "s": {"aide-memoire": {"x": 1}, "b": 2}}),
    ('{\n  /* c */ "s": {"aide-memoire": {"x": 0}, "b": "//"}\n}',
     {"s": {"aide-memoire": {"x": 1}, "b": "//"}}),
])
def test_jsonc_merge_edits_only_the_entry(text: str, expected: dict[str, Any]) -> None:
    merged = merge(text, "jsonc", ("s",), "aide-memoire", {"x": 1})
    assert _read_jsonc(merged.text) == expected
    assert merge(merged.text, "jsonc", ("s",), "aide-memoire", {"x": 1}).action == "unchanged"


def _read_jsonc(text: str) -> Any:
    text = re.sub(r"/\* c \*/", "", text)
    return json.loads(text)


@pytest.mark.parametrize("fmt", ["json", "jsonc", "toml"])
def test_a_byte_order_mark_and_windows_line_endings_are_kept(fmt: Format) -> None:
    text = ('\ufeff[s.other]\r\ncommand = "x"\r\n' if fmt == "toml"
            else '\ufeff{\r\n  "s": {\r\n    "other": {}\r\n  }\r\n}\r\n')
    merged = merge(text, fmt, ("s",), "aide-memoire", {"command": "y"})
    assert merged.action == "added" and merged.text.startswith("\ufeff")
    assert "\n" not in merged.text.replace("\r\n", "")
    assert "other" in merged.text and '"y"' in merged.text
    assert merge(merged.text, fmt, ("s",), "aide-memoire",
                 {"command": "y"}).action == "unchanged"


def test_json_with_a_syntax_error_names_the_line() -> None:
    with pytest.raises(ConfigError, match="line 2"):
        merge('{\n  "s": {,}\n}', "json", ("s",), "aide-memoire", {"x": 1})


def test_docs_clients_md_snippets_are_generated_from_the_table() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert render_docs() in text, (
        "docs/clients.md is stale: run `python -m aide_memoire.cli.clients docs/clients.md`")
