"""8 processes writing and recalling through ``Memory`` against one PostgreSQL store:
no write lost, no error, the audit chain whole (issue #19)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aide_memoire.engine.storage.postgres import PostgresDatabase

from .conftest import open_memory
from .gate import race

pytestmark = pytest.mark.slow

_WRITER = Path(__file__).with_name("memory_writer.py")
PROCESSES, WRITES = 8, 25


def test_eight_memory_processes_lose_nothing(pg_url: str, tmp_path: Path) -> None:
    PostgresDatabase(pg_url).close()  # the schema made once; the processes race on rows
    reports = race(
        pg_url, [[str(_WRITER), pg_url, str(tmp_path / f"home{n}"), str(n), str(WRITES)]
                 for n in range(PROCESSES)], timeout_s=600,
        quiet=lambda err: "Traceback" not in err and "error" not in err.lower())
    # Each process recalled every note it had just written.
    assert [r["found"] for r in reports] == [WRITES] * PROCESSES
    written = {i for r in reports for i in r["ids"]}
    assert len(written) == PROCESSES * WRITES
    # They wrote at the same time (else this proves nothing about concurrency).
    assert max(r["first"] for r in reports) < min(r["last"] for r in reports)
    mem = open_memory("postgres", tmp_path / "reader", pg_url, embedding_model="none")
    try:
        stored = mem.search(namespace="project:shared", limit=1000)
        assert {r.id for r in stored} == written
        for n in range(PROCESSES):
            assert len(mem.search(namespace="project:shared", tags=[f"w{n}"], limit=100)) \
                == WRITES
        assert mem.status().memories == PROCESSES * WRITES
        # One entity per shared name, every mention counted (no duplicate, none lost).
        names = mem.internals.db.conn().execute(
            "SELECT name, mentions FROM entities WHERE name IN ('alice martin', 'acme') "
            "ORDER BY name").fetchall()
        assert [tuple(n) for n in names] == [("acme", PROCESSES * WRITES),
                                             ("alice martin", PROCESSES * WRITES)]
        report = mem.audit_verify()
        assert report.intact and report.events >= PROCESSES * WRITES, report
    finally:
        mem.close()
