"""The MCP Bundle (``.mcpb``) for Claude Desktop: one file a person opens to install the
server (``make bundle``; docs/clients.md says how to install it).

The bundle uses the format's ``uv`` server type (manifest 0.4): it carries this package's
source and a ``pyproject.toml``, and Claude Desktop's own uv makes the environment with
the dependencies on first start. That is the way the format allows for a Python server
with compiled dependencies (pydantic, sqlite-vec, numpy, torch): a ``python`` bundle can
only carry pure-Python packages. The bundle's ``pyproject.toml`` is the package's own with
the extras a desktop user wants (``vectors``, ``embeddings``, ``code``) folded into the
base dependencies, so the environment is complete however the host calls uv.

The store is the shared default (nothing sets ``AIDE_MEMOIRE_HOME``), so what Desktop
learns, Claude Code and the other clients recall. The one setting is the namespace
(default ``user:me``: Desktop has no project folder).

``stage(folder)`` lays the bundle's files out; ``mcpb pack`` zips them. The manifest's
tools and prompts are the registry's, so the listing Desktop shows is the server's.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from .._version import __version__
from .prompts import load_prompts
from .registry import TOOLS

__all__ = ["BUNDLE_EXTRAS", "ENTRY", "manifest", "stage"]

REPO = Path(__file__).resolve().parents[3]
BUNDLE_EXTRAS = ("vectors", "embeddings", "code")
ENTRY = "main.py"
_MAIN = '''"""Claude Desktop's entry point for the aide-memoire bundle: `aide-memoire serve`."""

import sys

from aide_memoire.cli.entry import main

if __name__ == "__main__":
    if len(sys.argv) == 1:  # started with no arguments: serve over stdio
        sys.argv.append("serve")
    main()
'''


def manifest() -> dict[str, Any]:
    """The bundle's manifest.json (MCPB manifest 0.4)."""
    return {
        "manifest_version": "0.4",
        "name": "aide-memoire",
        "display_name": "aide-memoire",
        "version": __version__,
        "description": "Persistent, local-first memory: what Claude learns stays in one "
                       "SQLite file on this computer, recalled by keywords and meaning.",
        "long_description": (
            "aide-memoire keeps memories (decisions, preferences, lessons, conversations) "
            "in one SQLite file in your user data folder, shared with Claude Code and any "
            "other MCP client on this computer. Recall is hybrid (BM25 and a local "
            "MiniLM model); nothing leaves the machine and no model is downloaded at run "
            "time. The first start installs the Python environment (a few minutes)."),
        "author": {"name": "aide-memoire developers"},
        "license": "MIT",
        "keywords": ["memory", "sqlite", "local-first", "recall"],
        "server": {
            "type": "uv",
            "entry_point": ENTRY,
            "mcp_config": {
                "command": "uv",
                "args": ["run", "--directory", "${__dirname}", ENTRY, "serve",
                         "--namespace", "${user_config.namespace}"],
                "env": {},
            },
        },
        "user_config": {
            "namespace": {
                "type": "string", "title": "Namespace",
                "description": "Where Claude Desktop's memories go: user:me for things "
                               "about you, or project:NAME to share one project's memory "
                               "with Claude Code.",
                "default": "user:me", "required": False,
            },
        },
        "tools": [{"name": spec.name, "description": spec.description} for spec in TOOLS],
        "prompts": [{"name": p.name, "description": p.description, "arguments": ["namespace"],
                     "text": p.body} for p in load_prompts()],
        "compatibility": {"platforms": ["darwin", "win32"],
                          "runtimes": {"python": ">=3.11"}},
    }


def _bundle_pyproject(text: str) -> str:
    import tomlkit

    doc: Any = tomlkit.parse(text)
    project = doc["project"]
    wanted = [*project["dependencies"]]
    for extra in BUNDLE_EXTRAS:
        wanted += [d for d in project["optional-dependencies"][extra] if d not in wanted]
    project["dependencies"] = wanted
    return tomlkit.dumps(doc)


def stage(folder: Path, *, repo: Path = REPO) -> Path:
    """Lay out the bundle's files in ``folder`` (made empty first): the manifest, the
    entry point, the package source with its data files, and the bundle's pyproject."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copytree(repo / "server" / "aide_memoire", folder / "server" / "aide_memoire",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(repo / "README.md", folder / "README.md")
    (folder / "pyproject.toml").write_text(
        _bundle_pyproject((repo / "pyproject.toml").read_text(encoding="utf-8")),
        encoding="utf-8")
    (folder / ENTRY).write_text(_MAIN, encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps(manifest(), indent=2) + "\n",
                                          encoding="utf-8")
    return folder


if __name__ == "__main__":
    print(stage(Path(sys.argv[1])))
