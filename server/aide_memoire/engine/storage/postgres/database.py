"""A PostgreSQL store: connections, transactions, migrations (the server's db.py).

One connection per thread, in autocommit mode, with transactions opened explicitly:
``read()`` is one REPEATABLE READ snapshot (never blocked by writers), ``write()`` one
write transaction, in one of two modes:

- ``serialized`` (the default): READ COMMITTED, and the first statement takes the store's
  writer row lock (``meta``'s application row, FOR UPDATE), so aide-memoire writers queue
  as SQLite's ``BEGIN IMMEDIATE`` makes them, across processes and machines, with a row
  lock and ``lock_timeout`` instead of a file lock and ``busy_timeout``. The engine's
  writes were written for one writer at a time (read the audit head, then append; check
  for an exact duplicate, then insert), and every one of them appends to the audit chain:
  one hot row that every pair of concurrent writers would fight over anyway. Queuing
  costs them nothing they would not lose to conflicts, and nobody has to retry.
- ``serializable``: SERIALIZABLE isolation and no writer lock, for writes that touch no
  store-wide row (bulk loads, per-namespace work): disjoint writers run in parallel, and
  when two would interleave, one fails with a serialization failure, nothing of it kept.

``transact`` runs a function as such a transaction and runs it again, after a short random
pause, when it fails with a serialization failure or a deadlock; ``write()`` is one attempt
(a ``with`` block cannot be replayed) and reports the loss as StoreBusy.

Everything lives in its own schema (``aide_memoire`` by default), so the store can share
a database with other applications; the schema records its steps in
``schema_migrations`` like the SQLite file.
"""

from __future__ import annotations

import contextlib
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Literal, TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict

from ....logs import get_logger
from ...core.errors import InvalidInput, StoreBusy, StoreError
from ..protocol import Dialect
from .connection import PgConnection, register_vector
from .errors import is_retryable, translate
from .migrations import migrate
from .snapshot import begin as begin_snapshot

__all__ = ["Isolation", "PostgresDatabase", "describe"]

log = get_logger(__name__)

T = TypeVar("T")
Isolation = Literal["serialized", "serializable"]

_SCHEMA_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def describe(url: str) -> str:
    """The URL's database and server, for messages: never its password."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise InvalidInput(f"the database URL cannot be read ({exc}); expected "
                           "postgresql://user@host:port/database") from None
    host = parts.get("host") or "localhost"
    return f"PostgreSQL database {parts.get('dbname', '?')!s} on {host!s}"


class PostgresDatabase:
    """A ``postgresql://`` store, with one connection per thread."""

    dialect: Dialect = "postgres"

    def __init__(
        self,
        url: str,
        *,
        schema: str = "aide_memoire",
        lock_timeout_ms: int = 30_000,
        retries: int = 30,
        connect_timeout_s: int = 10,
    ) -> None:
        if not url.startswith(("postgresql://", "postgres://")):
            raise InvalidInput(
                f"not a PostgreSQL URL: {url.split('://')[0]}://...; expected "
                "postgresql://user@host:port/database"
            )
        if not _SCHEMA_RE.match(schema):
            raise InvalidInput(
                f"schema name {schema!r} is not a plain lower-case SQL name "
                "(letters, digits, _; at most 63)"
            )
        self.url = url
        self.schema = schema
        self.where = describe(url)
        self.lock_timeout_ms = lock_timeout_ms
        self.retries = retries
        self.connect_timeout_s = connect_timeout_s
        self._local = threading.local()
        self._connections: list[PgConnection] = []
        self._owners: dict[int, threading.Thread] = {}  # id(connection) -> its thread
        self._lock = threading.Lock()
        self._closed = False
        try:
            # Read committed: after waiting for another process's migration (the lock),
            # each statement sees what that process committed.
            with self._transaction("BEGIN ISOLATION LEVEL READ COMMITTED") as tx:
                self.applied = migrate(tx, schema)
            conn = self.conn()
            if not conn.vectors:  # pgvector came with the migration (this process's or not)
                conn.vectors = register_vector(conn.raw)
        except BaseException:
            self.close()
            raise

    # -- connections -------------------------------------------------------------------

    def _open(self) -> PgConnection:
        try:
            raw = psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=self.connect_timeout_s,
                application_name="aide-memoire",
                # The schema first: every unqualified name is the store's; public holds
                # the vector extension's type and operators.
                options=f"-c search_path={self.schema},public "
                f"-c lock_timeout={int(self.lock_timeout_ms)}",
            )
        except psycopg.Error as exc:
            raise translate(exc, self.where) from None
        try:
            vectors = register_vector(raw)
        except psycopg.Error as exc:
            raw.close()
            raise translate(exc, self.where) from None
        conn = PgConnection(raw, self.where)
        conn.vectors = vectors
        return conn

    def conn(self) -> PgConnection:
        """This thread's connection (autocommit; use :meth:`write` for transactions)."""
        if self._closed:
            raise StoreError(f"the store at {self.where} is closed; open it again")
        conn: PgConnection | None = getattr(self._local, "conn", None)
        if conn is None or conn.raw.closed:
            conn = self._adopt() or self._open()
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
                self._owners[id(conn)] = threading.current_thread()
        return conn

    def _adopt(self) -> PgConnection | None:
        """An idle connection of a thread that has ended, now this thread's; the others
        such are closed. Servers run requests on pooled worker threads that come and go
        (the daemon's): without this, each new worker opened a connection (tens of ms)
        and every ended one left its connection open on the server until close()."""
        found: PgConnection | None = None
        with self._lock:
            for conn in list(self._connections):
                owner = self._owners.get(id(conn))
                if owner is not None and owner.is_alive():
                    continue
                self._connections.remove(conn)
                self._owners.pop(id(conn), None)
                if found is None and not conn.raw.closed and not conn.in_transaction:
                    found = conn
                else:
                    with contextlib.suppress(Exception):
                        conn.raw.close()
        return found

    # -- transactions ------------------------------------------------------------------

    @contextlib.contextmanager
    def write(self, isolation: Isolation = "serialized") -> Iterator[PgConnection]:
        """One write transaction: committed on success, rolled back on error.

        A serialization failure (``serializable``: another writer won a race on the same
        rows) leaves as StoreBusy; :meth:`transact` runs the transaction again instead.
        """
        if isolation == "serializable":
            with self._transaction("BEGIN ISOLATION LEVEL SERIALIZABLE") as tx, tx.pipelined():
                yield tx
            return
        with self._transaction("BEGIN ISOLATION LEVEL READ COMMITTED") as tx:
            tx.execute("SELECT 1 FROM meta WHERE key = 'application' FOR UPDATE")
            with tx.pipelined():  # statements whose results are not read go unawaited
                yield tx

    @contextlib.contextmanager
    def read(self) -> Iterator[PgConnection]:
        """A consistent snapshot for several reads (inside a write: that transaction)."""
        conn = self.conn()
        if conn.in_transaction:
            yield conn
            return
        with self._transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                               snapshot=True) as tx:
            yield tx

    @contextlib.contextmanager
    def _transaction(self, begin: str, *, snapshot: bool = False) -> Iterator[PgConnection]:
        """``begin``, the block, COMMIT; ``snapshot``: a read-only one, opened with its
        facts and memo (snapshot.py), which end with it."""
        conn = self.conn()
        if conn.in_transaction:
            raise StoreError(
                "a transaction on this thread is still open (an unfinished read or "
                "iteration); finish or close it before writing"
            )
        if snapshot:
            try:
                begin_snapshot(conn, begin)
            except BaseException:
                self._rollback(conn)  # BEGIN may have run before the facts failed
                raise
        else:
            conn.execute(begin)
        try:
            try:
                yield conn
            except BaseException as exc:
                self._rollback(conn)
                if isinstance(exc, psycopg.Error):
                    raise translate(exc, self.where) from exc
                raise
            try:
                conn.execute("COMMIT")
            except BaseException:
                self._rollback(conn)
                raise
        finally:
            conn.memo = None

    def _rollback(self, conn: PgConnection) -> None:
        if conn.in_transaction and not conn.raw.closed:
            with contextlib.suppress(psycopg.Error):
                conn.raw.execute("ROLLBACK")

    def transact(
        self, work: Callable[[PgConnection], T], isolation: Isolation = "serialized"
    ) -> T:
        """Run ``work(tx)`` as one write transaction, again (after a short random pause)
        each time it loses a race to another writer, up to ``retries`` times."""
        for attempt in range(self.retries + 1):
            try:
                with self.write(isolation) as tx:
                    return work(tx)
            except StoreBusy as exc:
                if not is_retryable(exc.__cause__) or attempt == self.retries:
                    raise
                log.debug("write_retry", attempt=attempt + 1, where=self.where)
                # Exponential, jittered: writers that collided do not collide again in step.
                time.sleep(random.uniform(0, min(0.2, 0.002 * 2**attempt)))
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    # -- state -------------------------------------------------------------------------

    def schema_version(self) -> int:
        with self.read() as conn:
            row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations")
            found = row.fetchone()
        return int(found[0]) if found else 0

    def versions(self) -> dict[str, str]:
        """The server's and pgvector's versions (for ``status``)."""
        with self.read() as conn:
            server, vector = conn.execute(
                "SELECT current_setting('server_version'), "
                "(SELECT extversion FROM pg_extension WHERE extname = 'vector')"
            ).fetchone()
        return {"postgresql": str(server), "pgvector": str(vector)}

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        with self._lock:
            for conn in self._connections:
                with contextlib.suppress(Exception):
                    conn.raw.close()
            self._connections.clear()
            self._owners.clear()
            self._closed = True
        self._local = threading.local()

    def __enter__(self) -> PostgresDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresDatabase({self.where}, schema={self.schema})"

