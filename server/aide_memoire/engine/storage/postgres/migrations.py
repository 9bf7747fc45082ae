"""Running the numbered steps of schema.py, recorded in ``schema_migrations``.

Several processes may open a new store at once: a transaction-scoped advisory lock on the
schema's name makes one of them migrate while the others wait, then find nothing to do
(they run in READ COMMITTED, so after the wait each statement sees the winner's tables).
A schema that holds someone else's tables, or a newer aide-memoire's, is refused before
anything is written to it, as db.py refuses such a SQLite file.
"""

from __future__ import annotations

from ...core import clock
from ...core.errors import ForeignDatabase, NewerSchema, StoreError
from ..columns import add_column_statements
from ..migrations import MIGRATIONS
from . import security
from .connection import PgConnection
from .keyword_backfill import backfill_keywords
from .schema import STEPS

__all__ = ["LATEST", "migrate", "stored_version"]

_NAMES = {step.version: step.name for step in MIGRATIONS}
if set(_NAMES) != set(STEPS):  # pragma: no cover - caught by the first test run
    raise AssertionError("schema.py must have one step per engine migration")
LATEST = max(STEPS)


def stored_version(tx: PgConnection, schema: str) -> int | None:
    """The schema's last recorded step; None if the schema holds no tables yet."""
    tables = {
        str(name)
        for (name,) in tx.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = ?", (schema,)
        )
    }
    if not tables:
        return None
    if "schema_migrations" not in tables or "meta" not in tables:
        raise ForeignDatabase(
            f"schema {schema} of {tx.where} holds tables of another program; it was left "
            "untouched. Choose another schema or database"
        )
    marker = tx.execute("SELECT value FROM meta WHERE key = 'application'").fetchone()
    if marker is None or marker[0] != "aide-memoire":
        raise ForeignDatabase(
            f"schema {schema} of {tx.where} is not an aide-memoire store; it was left "
            "untouched. Choose another schema or database"
        )
    (version,) = tx.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
    return int(version)


def migrate(tx: PgConnection, schema: str) -> list[int]:
    """Apply the steps the schema lacks, in ``tx``; the versions applied, in order."""
    tx.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (f"aide-memoire:{schema}",))
    version = stored_version(tx, schema)
    if version is not None and version > LATEST:
        raise NewerSchema(
            f"schema {schema} of {tx.where} has schema version {version}, newer than this "
            f"aide-memoire understands ({LATEST}); it was left untouched. Upgrade aide-memoire"
        )
    if version is None:
        # The name was validated by PostgresDatabase (a plain lower-case SQL name).
        tx.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    applied: list[int] = []
    for step in sorted(STEPS):
        if version is not None and step <= version:
            continue
        if step == 2:
            _ensure_vector_extension(tx)
        if STEPS[step]:
            tx.executescript(STEPS[step])
        if step == 11 and version is not None:
            backfill_keywords(tx)
        tx.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (step, _NAMES[step], clock.format_time(clock.now())),
        )
        applied.append(step)
    present = [str(name) for (name,) in tx.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = ? "
        "AND table_name = 'memories'", (schema,))]
    for statement in add_column_statements(present, "postgres"):
        tx.execute(statement)  # a field declared since (storage/columns.py)
    if applied or not security.installed(tx):
        security.install(tx, schema)
    return applied


def _ensure_vector_extension(tx: PgConnection) -> None:
    """pgvector, in ``public`` where other applications of the database look for it too.

    Creating an extension needs a superuser (pgvector is not a trusted extension): a store
    whose owner is not one needs the extension made once by someone who is.
    """
    if tx.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    if not tx.execute(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
    ).fetchone():
        raise StoreError(
            f"the server of {tx.where} has no pgvector extension; install pgvector on the "
            "server (the package named for your PostgreSQL version), then open the store again"
        )
    if not tx.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
        raise StoreError(
            f"pgvector is not enabled in {tx.where} and this role may not enable it; ask a "
            "superuser to run CREATE EXTENSION vector SCHEMA public; in that database"
        )
    tx.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
