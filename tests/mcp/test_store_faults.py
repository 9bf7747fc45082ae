"""A store that cannot open, seen by a real MCP client over the real stdio transport: the
handshake is answered (by the stdio front), then every later request gets an answer that
names the problem and the setting to fix, the server stays up, and stderr says why."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from aide_memoire import Memory, Settings
from aide_memoire.engine.storage.migrations import APPLICATION_ID, SCHEMA_VERSION
from aide_memoire.mcp.registry import TOOLS
from mcp import Client, StdioServerParameters

from .conftest import BIN, server_env

Prepare = Callable[[Path], dict[str, str]]


def _made_store(home: Path, rows: int = 1) -> Path:
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        for i in range(rows):
            memory.store(f"row {i} of a store about to be damaged " * 20, namespace="project:x")
    return home / "memory.db"


def _store_is_a_folder(home: Path) -> dict[str, str]:
    (home / "memory.db").mkdir(parents=True)
    return {}


def _foreign_bytes(home: Path) -> dict[str, str]:
    home.mkdir()
    (home / "memory.db").write_bytes(b"not a database at all\n" * 500)
    return {}


def _damaged_first_page(home: Path) -> dict[str, str]:
    path = _made_store(home)
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the header stays valid, the schema does not
    path.write_bytes(bytes(data))
    return {}


def _damaged_cells(home: Path) -> dict[str, str]:
    # Cells of every page past the second overwritten: SQLite reads a length from the
    # garbage and answers with "out of memory" (MemoryError in Python), not an error code.
    path = _made_store(home, rows=50)
    data = bytearray(path.read_bytes())
    for page in range(8192, len(data), 4096):
        data[page + 100:page + 400] = b"\xff" * 300
    path.write_bytes(bytes(data))
    return {}


def _newer_schema(home: Path) -> dict[str, str]:
    home.mkdir()
    db = sqlite3.connect(home / "memory.db")
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    db.execute("CREATE TABLE memories (id TEXT)")
    db.commit()
    db.close()
    return {}


def _other_database_scheme(home: Path) -> dict[str, str]:
    return {"AIDE_MEMOIRE_DATABASE_URL": "mysql://someone@localhost/memory",
            "AIDE_MEMOIRE_EXTRACT_FACTS": "false"}


def _postgres_not_running(home: Path) -> dict[str, str]:
    return {"AIDE_MEMOIRE_DATABASE_URL": "postgresql://someone:hunter2@127.0.0.1:1/memory",
            "AIDE_MEMOIRE_EXTRACT_FACTS": "false"}


def _setting_not_valid(home: Path) -> dict[str, str]:
    return {"AIDE_MEMOIRE_MAX_CONTENT_BYTES": "a-lot-of-bytes"}


def _home_is_a_file(home: Path) -> dict[str, str]:
    home.write_text("a file where the store's folder should be\n")
    return {}


# (how the store is broken, words the answer must hold, the setting it must name)
CASES: dict[str, tuple[Prepare, tuple[str, ...], str]] = {
    "store file is a folder": (_store_is_a_folder, ("Is a directory",), "AIDE_MEMOIRE_HOME"),
    "foreign bytes": (_foreign_bytes, ("not a SQLite database",), "AIDE_MEMOIRE_HOME"),
    "damaged first page": (_damaged_first_page, ("corrupt",), "AIDE_MEMOIRE_HOME"),
    "damaged cells": (_damaged_cells, ("corrupt",), "AIDE_MEMOIRE_HOME"),
    "newer schema": (_newer_schema, ("newer than this aide-memoire", "Upgrade"),
                     "AIDE_MEMOIRE_HOME"),
    "database url of another kind": (_other_database_scheme, ("postgresql://",),
                                     "AIDE_MEMOIRE_DATABASE_URL"),
    "postgres not running": (_postgres_not_running, ("cannot use PostgreSQL",),
                             "AIDE_MEMOIRE_DATABASE_URL"),
    "setting not valid": (_setting_not_valid, ("valid integer", "restart the MCP server"),
                          "AIDE_MEMOIRE_MAX_CONTENT_BYTES"),
    "home is a file": (_home_is_a_file, ("cannot create the store's folder",),
                       "AIDE_MEMOIRE_HOME"),
}


def _params(home: Path, extra: dict[str, str]) -> StdioServerParameters:
    env = server_env(home, AIDE_MEMOIRE_EMBEDDING_MODEL="none", **extra)
    return StdioServerParameters(command=str(BIN / "aide-memoire"), args=["serve"], env=env)


@pytest.mark.parametrize("case", list(CASES))
async def test_every_request_after_the_handshake_is_answered_with_the_reason(
    tmp_path: Path, case: str,
) -> None:
    prepare, words, setting = CASES[case]
    home = tmp_path / "home"
    extra = prepare(home)
    store = home / "memory.db"
    before = store.read_bytes() if store.is_file() else None
    log = tmp_path / "stderr.txt"
    with log.open("w") as errlog:
        async with Client(stdio_client(_params(home, extra), errlog=errlog),
                          mode="legacy") as client:
            assert [t.name for t in (await client.list_tools()).tools] == [t.name for t in TOOLS]
            texts = []
            for name, arguments in [("memory_store", {"content": "deploys on Tuesdays"}),
                                    ("memory_recall", {"query": "when do we deploy?"}),
                                    ("memory_status", {})]:
                result = await client.call_tool(name, arguments)
                assert result.is_error, (name, result)
                texts.append(result.content[0].text)  # type: ignore[union-attr]
            with pytest.raises(MCPError) as read:
                await client.read_resource("memory://status")
            # Prompts need no store: they still work.
            prompt = await client.get_prompt("review-memory", {})
            assert "memory_review_queue" in prompt.messages[0].content.text  # type: ignore[union-attr]
    for text in [*texts, read.value.error.message]:
        assert "the store did not open" in text, text
        assert setting in text, text
        for word in words:
            assert word in text, text
        assert "hunter2" not in text  # a URL's password is never repeated
    assert "hunter2" not in log.read_text()
    stderr = log.read_text()
    assert "store_unavailable" in stderr or "no tool call can run" in stderr, stderr
    assert all(word in stderr for word in words), stderr
    assert "Traceback" not in stderr, stderr
    # The file that was there is left exactly as it was.
    assert (store.read_bytes() if store.is_file() else None) == before


async def test_a_store_fixed_meanwhile_serves_without_a_restart(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _store_is_a_folder(home)
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with Client(stdio_client(_params(home, {}), errlog=errlog),
                          mode="legacy") as client:
            refused = await client.call_tool("memory_store", {"content": "first try"})
            assert refused.is_error
            assert "each call tries again" in refused.content[0].text  # type: ignore[union-attr]
            (home / "memory.db").rmdir()  # the user moves the folder away
            stored = await client.call_tool("memory_store", {"content": "second try"})
            assert not stored.is_error, stored
            recalled = await client.call_tool("memory_recall", {"query": "second try"})
            hits = recalled.structured_content["hits"]
            assert [hit["content"] for hit in hits] == ["second try"]
    # The reason was logged once, not once per call.
    assert (tmp_path / "stderr.txt").read_text().count("store_unavailable") == 1


def test_a_person_at_a_terminal_still_gets_the_error_and_the_exit(tmp_path: Path) -> None:
    """Without a client (stdin a terminal), serve fails fast, as any command does."""
    import pty
    import subprocess

    leader, follower = pty.openpty()
    try:
        done = subprocess.run([str(BIN / "aide-memoire"), "serve"], stdin=follower,
                              capture_output=True, text=True, timeout=60,
                              env=server_env(tmp_path / "home",
                                             AIDE_MEMOIRE_MAX_CONTENT_BYTES="many"))
    finally:
        os.close(leader)
        os.close(follower)
    assert done.returncode != 0
    assert "AIDE_MEMOIRE_MAX_CONTENT_BYTES" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(("variable", "value"), [
    ("AIDE_MEMOIRE_MAX_CONTENT_BYTES", "secret-looking-9f2c"),
    ("AIDE_MEMOIRE_HOOK_RECALL_FLOOR", "7.5"),
    ("AIDE_MEMOIRE_HOOK_DAEMON", "perhaps-9f2c"),
])
def test_a_setting_that_does_not_validate_names_its_variable_not_its_value(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str,
) -> None:
    from aide_memoire.engine.core.errors import InvalidInput

    monkeypatch.setenv(variable, value)
    with pytest.raises(InvalidInput) as raised:
        Settings.from_env()
    assert variable in str(raised.value) and value not in str(raised.value)


def test_an_open_failure_the_engine_did_not_name_is_still_a_store_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from aide_memoire.engine.core.errors import StoreError
    from aide_memoire.mcp.edge import LazyMemory

    calls: list[int] = []

    def broken() -> Memory:
        calls.append(1)
        raise RuntimeError("a driver failure nobody mapped")

    lazy = LazyMemory(broken, where="the store is set by AIDE_MEMOIRE_HOME")
    for _ in range(2):
        with pytest.raises(StoreError) as raised:
            lazy.get()
        assert "unexpected RuntimeError" in str(raised.value)
        assert "AIDE_MEMOIRE_HOME" in str(raised.value)
    assert len(calls) == 2  # each call tries again
    logged = capsys.readouterr().err
    assert logged.count("store_unavailable") == 1 and "a driver failure nobody mapped" in logged
