"""The one declaration of a memory's fields (engine/core/fields.py) and what derives from it.

The demonstration: a field added to the declaration only (in a copy of the package,
with the generated models regenerated, as a developer would) round-trips through
store, recall and search, the MCP tools (the SDK's in-memory client), the CLI (its
entry in process), an existing store that predates it, and both backends (PostgreSQL
on the session's real pgserver).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aide_memoire import InvalidInput, Memory, Settings
from aide_memoire.engine.core import fields
from aide_memoire.engine.core.fields_codegen import render
from aide_memoire.engine.core.models import Hit, MemoryRecord
from aide_memoire.engine.storage.rows import COLUMNS

from ..pg_fixtures import PgServer, new_database

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "aide_memoire"


def test_the_generated_models_are_the_declarations() -> None:
    generated = (PACKAGE / "engine" / "core" / "record_models.py").read_text()
    assert generated == render(), (
        "record_models.py is stale: run python -m aide_memoire.engine.core.fields_codegen "
        "> server/aide_memoire/engine/core/record_models.py")


def test_every_layer_lists_the_declared_fields(tmp_path: Path) -> None:
    declared = [f.name for f in fields.FIELDS]
    assert list(COLUMNS) == declared
    assert list(MemoryRecord.model_fields) == [f.name for f in fields.FIELDS if f.record]
    assert {f.name for f in fields.recalled()} <= set(Hit.model_fields)
    with (Memory(settings=Settings(home=tmp_path, embedding_model="none")) as memory,
          memory.internals.db.read() as conn):
        stored = [str(r[1]) for r in conn.execute("PRAGMA table_info(memories)")]
    assert stored[1:] == declared  # after the rowid


def test_an_unknown_field_is_refused_naming_the_fields(tmp_path: Path) -> None:
    unknown: dict[str, Any] = {"colour": "red"}
    with Memory(settings=Settings(home=tmp_path, embedding_model="none")) as memory:
        untyped: Any = memory  # as a caller without a type checker passes it
        with pytest.raises(InvalidInput, match="store has no field 'colour'; it takes .*kind"):
            untyped.store("text", namespace="p", **unknown)
        with pytest.raises(InvalidInput, match="no filter 'colour'"):
            untyped.search(namespace="p", **unknown)
        assert memory.search(namespace="p") == []  # nothing was written


TICKET = (
    '    MemoryField("ticket", "label", optional=True, settable=True, written=True,\n'
    '                recalled=True, filter="equals",\n'
    "                help=\"The issue this memory is about, e.g. 'OPS-12'.\"),\n"
)

ROUND_TRIP = r'''
import asyncio, json, sys
from pathlib import Path
from click.testing import CliRunner
from mcp import Client
from aide_memoire import Memory, Settings
from aide_memoire.cli.main import cli
from aide_memoire.mcp.server import ServeSettings, build_server

home, url = Path(sys.argv[1]), (sys.argv[2] or None)
out = {}
extra = {"database_url": url} if url else {}
settings = Settings.from_env(home=home, **extra)
with Memory(settings=settings) as memory:
    out["old"] = memory.search(namespace="p")[0].model_dump(mode="json").get("ticket", "absent")
    a = memory.store("The deploy of the billing service failed on a locked table",
                     namespace="p", ticket="OPS-12")
    memory.store("The deploy of the search service went fine", namespace="p")
    out["get"] = memory.get(a, namespace="p").ticket
    hits = memory.recall("deploy failed", namespace="p", ticket="OPS-12")
    out["recall"] = [(h.id == a, h.ticket) for h in hits]
    out["recall_all"] = len(memory.recall("deploy", namespace="p"))
    out["search"] = [r.ticket for r in memory.search(namespace="p", ticket="OPS-12")]
    try:
        memory.store("x", namespace="p", ticket="t" * 2000)
    except Exception as exc:
        out["too_long"] = str(exc)

    async def mcp() -> None:
        server = build_server(memory, ServeSettings(default_namespace="p"))
        async with Client(server, mode="legacy") as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            out["mcp_params"] = [name for name in ("memory_store", "memory_recall",
                                 "memory_search") if "ticket" in listed[name].input_schema[
                                 "properties"]]
            await client.call_tool("memory_store", {"content": "Rotated the billing keys",
                                                     "ticket": "SEC-7"})
            got = await client.call_tool("memory_recall", {"query": "billing keys",
                                                           "ticket": "SEC-7"})
            out["mcp_recall"] = [h["ticket"] for h in got.structured_content["hits"]]
            bad = await client.call_tool("memory_store", {"content": "y", "ticket": 5})
            out["mcp_bad"] = bad.is_error

    asyncio.run(mcp())

runner = CliRunner()
base = ["--home", str(home)]
env = {"AIDE_MEMOIRE_DATABASE_URL": url} if url else {}
stored = runner.invoke(cli, [*base, "store", "The billing cron moved to 02:00",
                             "--namespace", "p", "--ticket", "OPS-40", "--json"], env=env)
out["cli_store"] = stored.exit_code
found = runner.invoke(cli, [*base, "search", "--namespace", "p", "--ticket", "OPS-40",
                            "--json"], env=env)
out["cli_search"] = [m["ticket"] for m in json.loads(found.output)["memories"]]
recalled = runner.invoke(cli, [*base, "recall", "billing cron", "--namespace", "p",
                               "--ticket", "OPS-40", "--json"], env=env)
out["cli_recall"] = [h["ticket"] for h in json.loads(recalled.output)["hits"]]
out["cli_help"] = "--ticket" in runner.invoke(cli, ["store", "--help"]).output
print(json.dumps(out))
'''

BEFORE = r'''
import sys
from pathlib import Path
from aide_memoire import Memory, Settings
home, url = Path(sys.argv[1]), (sys.argv[2] or None)
extra = {"database_url": url} if url else {}
with Memory(settings=Settings.from_env(home=home, **extra)) as memory:
    memory.store("Stored before the field existed", namespace="p")
'''


@pytest.fixture(scope="module")
def with_ticket(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package whose declaration alone gained a field, models regenerated."""
    root = tmp_path_factory.mktemp("ticket")
    shutil.copytree(PACKAGE, root / "aide_memoire",
                    ignore=shutil.ignore_patterns("__pycache__"))
    declaration = root / "aide_memoire" / "engine" / "core" / "fields.py"
    text = declaration.read_text()
    end = text.index('    MemoryField("context", "text"')
    end = text.index("\n)\n", end)
    declaration.write_text(text[: end + 1] + TICKET + text[end + 1 :])
    models = root / "aide_memoire" / "engine" / "core" / "record_models.py"
    models.write_text(_run(root, ["-m", "aide_memoire.engine.core.fields_codegen"]))
    return root


def _run(path: Path, args: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": str(path)}
    env.pop("AIDE_MEMOIRE_DATABASE_URL", None)
    done = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _round_trip(root: Path, home: Path, url: str) -> dict[str, object]:
    # The store is made by the package as it is (no such field), then opened by the copy.
    _run(PACKAGE.parent, ["-c", BEFORE, str(home), url])
    output = _run(root, ["-c", ROUND_TRIP, str(home), url])
    result: dict[str, object] = json.loads(output.strip().splitlines()[-1])
    return result


def _check(out: dict[str, object]) -> None:
    assert out["old"] is None  # the older memory got the new column, empty
    assert out["get"] == "OPS-12"
    assert out["recall"] == [[True, "OPS-12"]]  # the filter kept the one memory
    assert isinstance(out["recall_all"], int) and out["recall_all"] >= 2
    assert out["search"] == ["OPS-12"]
    assert "ticket must be text of at most 1000 characters" in str(out["too_long"])
    assert out["mcp_params"] == ["memory_store", "memory_recall", "memory_search"]
    assert out["mcp_recall"] == ["SEC-7"]
    assert out["mcp_bad"] is True
    assert out["cli_store"] == 0
    assert out["cli_search"] == ["OPS-40"]
    assert out["cli_recall"] == ["OPS-40"]
    assert out["cli_help"] is True


def test_a_field_declared_once_round_trips_on_sqlite(with_ticket: Path, tmp_path: Path) -> None:
    _check(_round_trip(with_ticket, tmp_path / "home", ""))


def test_a_field_declared_once_round_trips_on_postgres(
    with_ticket: Path, tmp_path: Path, pg_server: PgServer
) -> None:
    with new_database(pg_server) as url:
        _check(_round_trip(with_ticket, tmp_path / "home", url))
