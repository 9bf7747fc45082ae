"""Bad input gets a clear error and leaves the store exactly as it was."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from aide_memoire import (
    ForeignDatabase,
    InvalidContent,
    InvalidInput,
    InvalidNamespace,
    Memory,
    NewerSchema,
)
from tests.conftest import file_digest


def _snapshot(memory: Memory) -> list[str]:
    return list(memory.export_lines())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        ("x" * 1_000_001, "limit is 100000 bytes"),
        (b"caf\xe9", "not valid UTF-8"),
        ("bad \udc80 surrogate", "not valid Unicode"),
        ("nul\x00byte", "NUL"),
        ("\u200b\u200c\u200d", "no visible characters"),  # zero-width space, (non-)joiner
        ("\ufeff \u2060\u00ad", "no visible characters"),  # BOM, word joiner, soft hyphen
        ("\u202e\u2066\u2069", "no visible characters"),  # bidirectional controls
        ("\U000e0041\U000e0042", "no visible characters"),  # tag characters
        ("\u3164\u2800\u115f", "no visible characters"),  # blank-looking fillers
        ("\u0301\u0308 \u200b", "no visible characters"),  # combining marks with no base
        ("\u00a0\u2003\u3000", "empty"),  # wide spaces are whitespace
    ],
)
def test_bad_content(memory: Memory, content: object, message: str) -> None:
    memory.store("keep me", namespace="n")
    before = _snapshot(memory)
    with pytest.raises(InvalidContent, match=message):
        memory.store(content, namespace="n")  # type: ignore[arg-type]
    assert _snapshot(memory) == before


@pytest.mark.parametrize("content", ["\u200bhello", "e\u0301", "\u2764\ufe0f", "\ue000",
                                     "\u4e2d\u6587", "\U0001f44d\U0001f3fd"])
def test_text_with_something_visible_is_stored(memory: Memory, content: str) -> None:
    memory_id = memory.store(content, namespace="n")
    assert memory.get(memory_id, namespace="n").content == content


@pytest.mark.parametrize("namespace", ["../x", "", "x" * 300, "a/b", ".hidden", "a..b", "sp ace"])
def test_bad_namespace(memory: Memory, namespace: str) -> None:
    memory.store("keep me", namespace="n")
    before = _snapshot(memory)
    with pytest.raises(InvalidNamespace):
        memory.store("text", namespace=namespace)
    with pytest.raises(InvalidNamespace):
        memory.recall("text", namespace=namespace)
    assert _snapshot(memory) == before


@pytest.mark.parametrize(
    "query", ['"foo AND (bar', "*", "NEAR(", "foo:bar", "^start", "a OR", "-x +y", "'"]
)
def test_fts_syntax_in_queries_is_plain_text(memory: Memory, query: str) -> None:
    memory_id = memory.store("foo and bar near the start of x", namespace="n")
    hits = memory.recall(query, namespace="n")
    assert all(h.id == memory_id for h in hits)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "poem"}, "kind"),
        ({"importance": 2}, "importance"),
        ({"importance": "high"}, "importance"),
        ({"tags": ["a,b"]}, "tag"),
        ({"metadata": {"x": object()}}, "JSON"),
        ({"observed_at": "yesterday"}, "ISO 8601"),
    ],
)
def test_bad_fields(memory: Memory, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        memory.store("text", namespace="n", **kwargs)  # type: ignore[arg-type]
    assert memory.status().memories == 0


def test_bad_limit_and_empty_query(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="limit"):
        memory.recall("x", namespace="n", limit=0)
    with pytest.raises(InvalidInput, match="query is empty"):
        memory.recall("  ", namespace="n")


def _fill(home: Path, count: int = 300) -> Path:
    with Memory(home) as m:
        for i in range(count):
            m.store(f"memory number {i} with some padding text " * 5, namespace="n")
    return home / "memory.db"


def test_truncated_database_refused_untouched(tmp_path: Path) -> None:
    db = _fill(tmp_path / "h")
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    digest = file_digest(db)
    with pytest.raises(ForeignDatabase, match="truncated"):
        Memory(tmp_path / "h")
    assert file_digest(db) == digest


def test_garbage_file_refused_untouched(tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "memory.db").write_bytes(b"this is not a database at all\n" * 100)
    digest = file_digest(home / "memory.db")
    with pytest.raises(ForeignDatabase, match="not a SQLite database"):
        Memory(home)
    assert file_digest(home / "memory.db") == digest


def test_foreign_sqlite_refused_untouched(tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    conn = sqlite3.connect(home / "memory.db")
    conn.execute("CREATE TABLE invoices (id INTEGER)")
    conn.commit()
    conn.close()
    digest = file_digest(home / "memory.db")
    with pytest.raises(ForeignDatabase, match="another program"):
        Memory(home)
    assert file_digest(home / "memory.db") == digest


def test_newer_schema_refused_untouched(tmp_path: Path) -> None:
    db = _fill(tmp_path / "h", count=3)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()
    digest = file_digest(db)
    with pytest.raises(NewerSchema, match="Upgrade aide-memoire"):
        Memory(tmp_path / "h")
    assert file_digest(db) == digest
