"""After a forget: clear dead row versions from the store's table files, and say where
copies may still be (docs/postgres.md, "Forget in PostgreSQL").

A committed DELETE leaves the row's bytes in its pages until they are reused. ``VACUUM``
makes that space reusable (bytes may stay until overwritten); ``VACUUM FULL`` rewrites the
tables and their indexes into new files and drops the old ones, so no table file of the
live database holds the text any more. Neither reaches the write-ahead log, archives,
replicas or backups: the report names those that this server has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from psycopg import sql

from ...core.errors import InvalidInput, StoreError
from .connection import PgConnection
from .database import PostgresDatabase

__all__ = ["PurgeReport", "purge"]


@dataclass(frozen=True)
class PurgeReport:
    """What a purge did, and where copies of deleted text may remain."""

    tables: list[str]
    full: bool
    remaining: list[str]


def purge(db: PostgresDatabase, tables: Sequence[str], *, full: bool = False) -> PurgeReport:
    """VACUUM (``full``: VACUUM FULL, which locks each table while it is rewritten) the
    store's ``tables``, outside any transaction; needs the role that owns them."""
    conn = db.conn()
    if conn.in_transaction:
        raise StoreError("a purge runs outside transactions; finish the open one first")
    names = sorted(set(tables))
    for name in names:
        _check_owned(conn, db.schema, name)
    command = "VACUUM (FULL)" if full else "VACUUM"
    for name in names:
        conn.executescript(f"{command} {sql.Identifier(db.schema, name).as_string(conn.raw)}")
    return PurgeReport(tables=names, full=full, remaining=_remaining(conn, full))


def _check_owned(conn: PgConnection, schema: str, table: str) -> None:
    row = conn.execute(
        "SELECT pg_has_role(current_user, c.relowner, 'USAGE') "
        "OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = ? AND c.relname = ? AND c.relkind IN ('r', 'p')",
        (schema, table),
    ).fetchone()
    if row is None:
        raise InvalidInput(f"no table {table!r} in the store's schema {schema}")
    if not row[0]:
        # PostgreSQL would skip the table with a warning: a purge that did nothing
        # must not report success.
        raise StoreError(
            f"only the role that owns table {table} (or a superuser) can purge it; run the "
            "purge as the store's owner"
        )


def _remaining(conn: PgConnection, full: bool) -> list[str]:
    out = ["the write-ahead log (pg_wal): segments are reused, not cleared"]
    if not full:
        out.insert(0, "freed space in the table and index pages, until new rows reuse it")
    setting = conn.execute("SELECT current_setting('archive_mode')").fetchone()
    if setting and setting[0] != "off":
        out.append("archived WAL (archive_mode is on), for as long as the archive keeps it")
    slots = conn.execute("SELECT count(*) FROM pg_replication_slots").fetchone()
    if slots and int(slots[0]):
        out.append(f"WAL held for {int(slots[0])} replication slot(s), and their replicas")
    replicas = conn.execute("SELECT count(*) FROM pg_stat_replication").fetchone()
    if replicas and int(replicas[0]):
        out.append(f"{int(replicas[0])} streaming replica(s): the same dead bytes and WAL")
    out.append("backups and snapshots taken before the forget")
    return out
