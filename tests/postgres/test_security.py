"""Row-level security: a namespace restricted to one role is invisible to another."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
import pytest

from aide_memoire.engine.core.errors import InvalidInput, StoreError
from aide_memoire.engine.storage.postgres import (
    PgConnection,
    PostgresDatabase,
    ensure_space,
    grant_store_access,
    insert_vectors,
    keyword_search,
    knn,
    restrict_namespace,
    restricted_namespaces,
    unrestrict_namespace,
)

from .conftest import PgServer
from .rows import insert_memory

PRIVATE, SHARED = "user:alice", "project:team"


@dataclass
class Team:
    owner: PostgresDatabase
    alice: PostgresDatabase
    bob: PostgresDatabase
    vectors: str
    rows: dict[str, int]
    alice_role: str


def _roles(admin_url: str, names: list[str], create: bool) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for name in names:
            conn.execute(f"CREATE ROLE {name} LOGIN" if create else f"DROP ROLE {name}")


@pytest.fixture
def team(pg_server: PgServer, pg_url: str) -> Iterator[Team]:
    suffix = uuid.uuid4().hex[:8]
    alice, bob = f"alice_{suffix}", f"bob_{suffix}"
    _roles(pg_server.admin_url, [alice, bob], create=True)
    database = pg_url.split("/")[3].split("?")[0]
    owner = PostgresDatabase(pg_url)
    rows: dict[str, int] = {}
    with owner.write() as tx:
        for role in (alice, bob):
            grant_store_access(tx, role, owner.schema)
        restrict_namespace(tx, PRIVATE, alice)
        table = ensure_space(tx, "test_2", "test", 2, "2026-01-01")
        for namespace, text, vector in (
            (PRIVATE, "alice's salary negotiation notes", [1.0, 0.0]),
            (SHARED, "the team's release notes", [0.9, 0.1]),
        ):
            rows[namespace] = insert_memory(tx, namespace, text)
            insert_vectors(tx, table, [(rows[namespace], namespace, vector)])
    stores = [PostgresDatabase(pg_server.url(database, user)) for user in (alice, bob)]
    yield Team(owner, stores[0], stores[1], table, rows, alice)
    for store in (owner, *stores):
        store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:  # roles own privileges here
        for role in (alice, bob):
            conn.execute(f"DROP OWNED BY {role}")
    _roles(pg_server.admin_url, [alice, bob], create=False)


def _visible(conn: PgConnection, table: str) -> list[int]:
    return [r for (r,) in conn.execute(f"SELECT rowid FROM {table} ORDER BY rowid")]


def test_the_restricted_namespace_is_invisible_to_another_role(team: Team) -> None:
    private, shared = team.rows[PRIVATE], team.rows[SHARED]
    with team.bob.read() as conn:
        assert _visible(conn, "memories") == [shared]
        assert _visible(conn, "keyword_docs") == [shared]
        assert {r for (r,) in conn.execute("SELECT rowid FROM keyword_postings")} == {shared}
        assert _visible(conn, team.vectors) == [shared]
        both = keyword_search(conn, ["notes"], [PRIVATE, SHARED])
        assert [r for r, _ in both] == [shared]
        assert both[0][1] == pytest.approx(keyword_search(conn, ["notes"], [SHARED])[0][1])
        assert [r for r, _ in knn(conn, team.vectors, [1.0, 0.0], [PRIVATE, SHARED], 5)] == [
            shared
        ]
        # Even by the partition's own name (parents' policies do not guard partitions).
        partitions = [
            str(p) for (p,) in conn.execute(
                "SELECT inhrelid::regclass::text FROM pg_inherits "
                "WHERE inhparent = ?::regclass", (team.vectors,),
            )
        ]
        assert len(partitions) == 2
        assert sorted(r for p in partitions for r in _visible(conn, p)) == [shared]
    with team.alice.read() as conn:
        assert _visible(conn, "memories") == [private, shared]
        assert {r for r, _ in keyword_search(conn, ["notes"], [PRIVATE, SHARED])} == {
            private, shared,
        }
        assert knn(conn, team.vectors, [1.0, 0.0], [PRIVATE], 5)[0][0] == private


def test_another_role_cannot_write_into_or_unlock_the_namespace(team: Team) -> None:
    with pytest.raises(StoreError, match="may not"), team.bob.write() as tx:
        insert_memory(tx, PRIVATE, "bob slips a note into alice's namespace")
    with pytest.raises(StoreError, match="may not"), team.bob.write() as tx:
        unrestrict_namespace(tx, PRIVATE)
    with team.bob.write() as tx:  # rows bob cannot see, bob cannot change either
        tx.execute("UPDATE memories SET content = 'defaced'")
        tx.execute("DELETE FROM memories")
    with team.alice.read() as conn:
        assert conn.execute(
            "SELECT content FROM memories WHERE rowid = ?", (team.rows[PRIVATE],)
        ).fetchone() == ("alice's salary negotiation notes",)
    with team.owner.read() as conn:
        assert restricted_namespaces(conn) == {PRIVATE: team.alice_role}


def test_lifting_the_restriction_opens_the_namespace_again(team: Team) -> None:
    with team.owner.write() as tx:
        assert unrestrict_namespace(tx, PRIVATE) is True
        assert unrestrict_namespace(tx, PRIVATE) is False
    with team.bob.read() as conn:
        assert team.rows[PRIVATE] in _visible(conn, "memories")


def test_restricting_to_a_role_that_does_not_exist_is_refused(team: Team) -> None:
    with pytest.raises(InvalidInput, match="no database role"), team.owner.write() as tx:
        restrict_namespace(tx, SHARED, "nobody_by_that_name")
