"""The code index's tables are made on first use (issue #20): a store that never indexed
code carries none of them, one that did keeps them across migration 10."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.code.index import CodeIndex
from aide_memoire.engine.core.errors import NotFound
from aide_memoire.engine.storage.db import SqliteDatabase
from aide_memoire.engine.storage.driver import load_driver
from aide_memoire.engine.storage.migrations import APPLICATION_ID, MIGRATIONS
from aide_memoire.engine.storage.sqlite_file import verify_file
from aide_memoire.engine.storage.sqlite_steps import CODE_DOC_TABLES as DOC_TABLES
from aide_memoire.engine.storage.sqlite_steps import CODE_TABLES as TABLES
from aide_memoire.engine.storage.sqlite_steps import code_index_present as present

from .conftest import open_index

FIXTURES = Path(__file__).parent / "fixtures"


def _code_tables(db: Path) -> set[str]:
    conn = load_driver().connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {str(r[0]) for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'code%'")}
    finally:
        conn.close()


def _tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir(parents=True)
    for fixture in FIXTURES.iterdir():
        if fixture.is_file():
            (src / fixture.name).write_bytes(fixture.read_bytes())
    return src


def _store_at(path: Path, version: int) -> None:
    """A store as a release with migrations 1..version made it (the code index included)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = load_driver().connect(str(path), isolation_level=None)
    try:
        conn.execute("PRAGMA page_size = 2048")
        conn.execute("BEGIN")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        for step in MIGRATIONS[:version]:
            step.apply(conn)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00Z')",
                         (step.version, step.name))
        conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
    finally:
        conn.close()


def _roll_back_to_9(path: Path) -> None:
    """Mark a store as schema 9 again, so that opening it runs migration 10 on real rows."""
    conn = load_driver().connect(str(path), isolation_level=None)
    try:
        conn.execute("DELETE FROM schema_migrations WHERE version > 9")
        conn.execute("PRAGMA user_version = 9")
    finally:
        conn.close()


def test_a_fresh_store_has_no_code_tables(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        memory.store("Deploys go through ops/deploy.sh", namespace="project:app")
        assert memory.doctor().healthy
    assert _code_tables(home / "memory.db") == set()
    assert verify_file(home / "memory.db", load_driver()) is None


def test_search_and_symbol_on_a_store_that_never_indexed_say_so(tmp_path: Path) -> None:
    code = open_index(tmp_path / "home")
    try:
        with pytest.raises(NotFound, match="has not been indexed"):
            code.search(tmp_path, "anything")
        with pytest.raises(NotFound, match="has not been indexed"):
            code.symbol(tmp_path, "anything")
        assert not present(code.db.conn())  # reading made nothing
    finally:
        code.db.close()


def test_indexing_makes_the_tables_and_search_works(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    home = tmp_path / "home"
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        report = memory.code_index(src)
        assert report.files > 0 and report.symbols > 0
        assert memory.code_symbol(src, "midpoint")
        assert memory.code_search(src, "midpoint of two points")
        assert memory.doctor().healthy
        memory.snapshot()
    assert _code_tables(home / "memory.db") >= set(TABLES)
    assert verify_file(home / "memory.db", load_driver()) is None  # extra tables are fine


def test_a_store_that_indexed_before_keeps_its_index(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    db = tmp_path / "home" / "memory.db"
    _store_at(db, 9)
    code = CodeIndex(SqliteDatabase(db))  # opening migrates 9 -> 10: nothing indexed, tables go
    assert not present(code.db.conn())
    first = code.index(src)
    before = code.symbol(src, "midpoint")
    code.db.close()
    _roll_back_to_9(db)
    code = CodeIndex(SqliteDatabase(db))
    try:
        assert code.db.conn().execute("PRAGMA user_version").fetchone()[0] == MIGRATIONS[-1].version
        assert code.symbol(src, "midpoint") == before and before
        again = code.index(src)
        assert again.files == first.files and again.indexed == 0  # all unchanged: kept
    finally:
        code.db.close()


def test_a_store_at_9_that_never_indexed_loses_the_tables(tmp_path: Path) -> None:
    db = tmp_path / "home" / "memory.db"
    _store_at(db, 9)
    assert _code_tables(db) >= set(TABLES) - set(DOC_TABLES)  # migrations 4 and 5 made these
    SqliteDatabase(db).close()
    assert _code_tables(db) == set()
    assert verify_file(db, load_driver()) is None


def test_two_stores_indexing_first_at_once_both_succeed(tmp_path: Path) -> None:
    """Two connections (as two processes would) each make the tables on their first write."""
    trees = [_tree(tmp_path / name) for name in ("a", "b")]
    SqliteDatabase(tmp_path / "home" / "memory.db").close()
    indexes = [open_index(tmp_path / "home") for _ in trees]
    try:
        with ThreadPoolExecutor(2) as pool:
            reports = list(pool.map(lambda p: p[0].index(p[1]), zip(indexes, trees, strict=True)))
        assert all(r.files > 0 for r in reports)
        for code, tree in zip(indexes, trees, strict=True):
            assert code.symbol(tree, "midpoint")
    finally:
        for code in indexes:
            code.db.close()
