"""Row-level security: a namespace restricted to a database role.

A shared server can hold private namespaces. ``namespace_roles`` maps a namespace to the
one role (a login role or a group role) whose members may see and write it; a namespace
not listed there is open to every role granted the store (``grant_store_access``). Each
table that holds a namespace's data carries one policy that asks ``namespace_visible``,
for reading (USING) and for writing (WITH CHECK); tables keyed by a memory follow that
memory's visibility. So a role outside the namespace finds nothing there (its rows, keyword
documents, vectors, facts, findings, queue items) and cannot write into it.

What it does not cover, on purpose: the audit log (its hash chain is verified as a whole;
it holds content hashes and ids, never text) and the schema's owner and superusers, who
see every row (PostgreSQL exempts them). Give each person or agent their own role that
does not own the schema.
"""

from __future__ import annotations

from psycopg import sql

from ...core.errors import InvalidInput
from .connection import PgConnection

__all__ = [
    "grant_store_access", "install", "installed", "protect", "restrict_namespace",
    "restricted_namespaces", "unrestrict_namespace",
]

POLICY = "namespace_role"

# Tables with a namespace column, and how tables keyed by a memory find theirs.
_BY_NAMESPACE = (
    "memories", "keyword_docs", "keyword_postings", "keyword_terms", "vector_state", "review_items",
    "namespace_sizes", "entities", "facts", "entity_edges", "memory_links",
    "maintenance_runs", "maintenance_leases", "memory_terms", "memory_updates",
)
_BY_MEMORY = {
    "memory_findings": "EXISTS (SELECT 1 FROM memories m WHERE m.id = memory_id)",
    "memory_feedback": "EXISTS (SELECT 1 FROM memories m WHERE m.id = memory_id)",
    "memory_entities": "EXISTS (SELECT 1 FROM memories m WHERE m.rowid = memory_rowid)",
}


def _visible_sql(schema: str) -> str:
    # Plain SQL, schema-qualified and without SET options, so the planner inlines it into
    # each query. pg_roles by oid: a dropped role leaves its namespaces closed, not an error.
    return f"""
CREATE TABLE IF NOT EXISTS {schema}.namespace_roles (
    namespace TEXT PRIMARY KEY,
    role NAME NOT NULL
);
REVOKE ALL ON {schema}.namespace_roles FROM PUBLIC;
CREATE OR REPLACE FUNCTION {schema}.namespace_visible(ns TEXT) RETURNS BOOLEAN
LANGUAGE sql STABLE AS $body$
    SELECT NOT EXISTS (
        SELECT 1 FROM {schema}.namespace_roles r
        WHERE r.namespace = ns AND NOT EXISTS (
            SELECT 1 FROM pg_catalog.pg_roles g
            WHERE g.rolname = r.role AND pg_catalog.pg_has_role(current_user, g.oid, 'MEMBER')))
$body$;
"""


def installed(conn: PgConnection) -> bool:
    found = conn.execute("SELECT to_regclass('namespace_roles')").fetchone()
    return found is not None and found[0] is not None


def install(tx: PgConnection, schema: str) -> None:
    """Create (or refresh) the roles table, the visibility function and every policy."""
    tx.executescript(_visible_sql(schema))
    for table in _BY_NAMESPACE:
        protect(tx, table)
    for table, condition in _BY_MEMORY.items():
        _policy(tx, table, condition)
    for (table,) in tx.execute("SELECT table_name FROM vector_spaces").fetchall():
        protect(tx, str(table))


def protect(tx: PgConnection, table: str) -> None:
    """Put a table with a ``namespace`` column under the namespace policy."""
    _policy(tx, table, "namespace_visible(namespace)")


def _policy(tx: PgConnection, table: str, condition: str) -> None:
    name = sql.Identifier(table).as_string(tx.raw)
    tx.executescript(
        f"ALTER TABLE {name} ENABLE ROW LEVEL SECURITY;\n"
        f"DROP POLICY IF EXISTS {POLICY} ON {name};\n"
        f"CREATE POLICY {POLICY} ON {name} USING ({condition}) WITH CHECK ({condition});"
    )


def _role_exists(tx: PgConnection, role: str) -> None:
    if not tx.execute("SELECT 1 FROM pg_roles WHERE rolname = ?", (role,)).fetchone():
        raise InvalidInput(
            f"no database role named {role!r}; create it first (CREATE ROLE ...) or name "
            "an existing one"
        )


def grant_store_access(tx: PgConnection, role: str, schema: str) -> None:
    """Let ``role`` use the store: read and write its tables (within the policies), read
    which namespaces are restricted; no schema changes, no changes to restrictions."""
    _role_exists(tx, role)
    who = sql.Identifier(role).as_string(tx.raw)
    tx.executescript(
        f"GRANT USAGE ON SCHEMA {schema} TO {who};\n"
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {who};\n"
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {who};\n"
        f"REVOKE INSERT, UPDATE, DELETE ON {schema}.namespace_roles FROM {who};\n"
        # Tables the owner makes later (a new embedding space's vectors) follow.
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} "
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {who};\n"
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT USAGE, SELECT ON SEQUENCES TO {who};"
    )


def restrict_namespace(tx: PgConnection, namespace: str, role: str) -> None:
    """From now on only members of ``role`` (and the owner) see or write ``namespace``."""
    _role_exists(tx, role)
    tx.execute(
        "INSERT INTO namespace_roles (namespace, role) VALUES (?, ?) "
        "ON CONFLICT (namespace) DO UPDATE SET role = excluded.role",
        (namespace, role),
    )


def unrestrict_namespace(tx: PgConnection, namespace: str) -> bool:
    """Open ``namespace`` to every role granted the store again; False if it was open."""
    return tx.execute("DELETE FROM namespace_roles WHERE namespace = ?", (namespace,)).rowcount > 0


def restricted_namespaces(conn: PgConnection) -> dict[str, str]:
    return {
        str(ns): str(role)
        for ns, role in conn.execute("SELECT namespace, role FROM namespace_roles ORDER BY 1")
    }
