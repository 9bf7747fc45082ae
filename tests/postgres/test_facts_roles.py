"""Facts and entities under row-level security: a role writes and reads the facts of
its namespaces through ``Memory`` (facts on, as by default), and another role finds
none of a namespace restricted to the first, though both name the same entities."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from aide_memoire import Memory
from aide_memoire.engine.storage.postgres import (
    PostgresDatabase,
    grant_store_access,
    restrict_namespace,
)

from .conftest import PgServer, open_memory

PRIVATE, SHARED = "user:alice", "project:team"


@pytest.fixture
def roles(pg_server: PgServer, pg_url: str) -> Iterator[tuple[str, str]]:
    """Two login roles granted the store; PRIVATE restricted to the first."""
    suffix = uuid.uuid4().hex[:8]
    names = (f"alice_{suffix}", f"bob_{suffix}")
    with psycopg.connect(pg_server.admin_url, autocommit=True) as conn:
        for name in names:
            conn.execute(f"CREATE ROLE {name} LOGIN")
    database = pg_url.split("/")[3].split("?")[0]
    with PostgresDatabase(pg_url) as owner, owner.write() as tx:
        for name in names:
            grant_store_access(tx, name, owner.schema)
        restrict_namespace(tx, PRIVATE, names[0])
    yield tuple(pg_server.url(database, user=name) for name in names)  # type: ignore[misc]
    with psycopg.connect(pg_server.admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        for name in names:
            conn.execute(f"DROP ROLE {name}")


def _memory(url: str, home: Path) -> Memory:
    return open_memory("postgres", home, url, embedding_model="none")


def test_facts_of_a_restricted_namespace_stay_with_its_role(
    roles: tuple[str, str], tmp_path: Path
) -> None:
    alice_url, bob_url = roles
    with _memory(alice_url, tmp_path / "alice") as alice:
        old = alice.store("Alice Martin works at Acme.", namespace=PRIVATE,
                          observed_at="2024-01-01")
        new = alice.store("Alice Martin left Acme and joined Globex.", namespace=PRIVATE,
                          observed_at="2024-06-01")
        assert alice.get(old, namespace=PRIVATE).superseded_by == new
        assert [f.object for f in alice.facts("alice martin", namespace=PRIVATE)] == ["globex"]
    with _memory(bob_url, tmp_path / "bob") as bob:
        bob.store("Alice Martin works at Acme.", namespace=SHARED)  # the same names, shared
        assert [f.object for f in bob.facts("alice martin", namespace=SHARED)] == ["acme"]
        assert bob.facts("alice martin", namespace=PRIVATE, include_history=True) == []
        conn = bob.internals.db.conn()
        for table in ("facts", "entities", "entity_edges", "memory_terms"):
            seen = conn.execute(f"SELECT count(*) FROM {table} WHERE namespace = ?",
                                (PRIVATE,)).fetchone()[0]
            assert seen == 0, table
        assert {e.name for e in bob.related("alice martin", namespace=SHARED).entities} == {
            "acme"}
