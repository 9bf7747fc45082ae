"""After a forget, purge leaves no table file holding the text, and says what it cannot."""

from __future__ import annotations

import secrets
from pathlib import Path

import psycopg
import pytest

from aide_memoire.engine.core.errors import InvalidInput, StoreError
from aide_memoire.engine.storage.postgres import PostgresDatabase, ensure_space, insert_vectors
from aide_memoire.engine.storage.postgres.purge import purge

from .conftest import PgServer
from .rows import insert_memory

_TABLES = ["memories", "keyword_docs", "keyword_postings", "keyword_terms", "memory_vec_test_2"]


def _files_holding(data_dir: Path, word: bytes) -> list[Path]:
    found = []
    for path in sorted((data_dir / "base").rglob("*")):
        try:
            if path.is_file() and word in path.read_bytes():
                found.append(path)
        except FileNotFoundError:  # the server dropped it while we looked: holds nothing
            continue
    return found


def _checkpoint(admin_url: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # what is in shared buffers reaches the files


def _forgotten(db: PostgresDatabase, word: str) -> None:
    with db.write() as tx:
        table = ensure_space(tx, "test_2", "test", 2, "2026-01-01")
        for i in range(40):
            rowid = insert_memory(tx, "project:a", f"unrelated note number {i}")
            insert_vectors(tx, table, [(rowid, "project:a", [1.0, float(i)])])
        secret = insert_memory(tx, "project:a", f"the vault phrase is {word} {word}")
        insert_vectors(tx, table, [(secret, "project:a", [0.0, 1.0])])
    with db.write() as tx:
        tx.execute("DELETE FROM memories WHERE rowid = ?", (secret,))


def test_vacuum_full_leaves_no_table_file_holding_forgotten_text(
    pg_server: PgServer, pg_url: str
) -> None:
    word = "zq" + secrets.token_hex(6)  # one no other test or catalog holds
    with PostgresDatabase(pg_url) as db:
        _forgotten(db, word)
        _checkpoint(pg_server.admin_url)
        # Deleted and committed, yet still in the files: what purge is for.
        assert _files_holding(pg_server.data_dir, word.encode())
        report = purge(db, _TABLES, full=True)
        _checkpoint(pg_server.admin_url)
        assert _files_holding(pg_server.data_dir, word.encode()) == []
        with db.read() as conn:
            assert conn.execute("SELECT count(*) FROM memories").fetchone() == (40,)
    assert report.full and report.tables == sorted(_TABLES)
    assert any("write-ahead log" in place for place in report.remaining)
    assert any("backups" in place for place in report.remaining)


def test_plain_vacuum_says_freed_space_may_still_hold_it(pg_url: str) -> None:
    with PostgresDatabase(pg_url) as db:
        _forgotten(db, "plainvacuumword")
        report = purge(db, ["memories", "keyword_docs", "keyword_postings"])
    assert not report.full
    assert report.remaining[0].startswith("freed space")


def test_purge_refuses_what_it_cannot_do(pg_server: PgServer, pg_url: str) -> None:
    with PostgresDatabase(pg_url) as db:
        with pytest.raises(InvalidInput, match="no table"):
            purge(db, ["pg_authid"])
        with db.write(), pytest.raises(StoreError, match="outside transactions"):
            purge(db, ["memories"])
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE ROLE purge_guest LOGIN")
        conn.execute("GRANT USAGE ON SCHEMA aide_memoire TO purge_guest")
        conn.execute("GRANT SELECT, UPDATE ON ALL TABLES IN SCHEMA aide_memoire TO purge_guest")
    database = pg_url.split("/")[3].split("?")[0]
    try:
        with (
            PostgresDatabase(pg_server.url(database, "purge_guest")) as guest,
            pytest.raises(StoreError, match="owns table memories"),
        ):
            purge(guest, ["memories"])
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DROP OWNED BY purge_guest")
            conn.execute("DROP ROLE purge_guest")
