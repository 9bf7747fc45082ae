"""A PostgresDatabase as the engine's :class:`~..protocol.Database`, from a data home.

Beyond ``write`` / ``read`` / ``conn`` the engine asks a store for what it really is:

- ``local_state`` is a small file in the data home, ``postgres.store``, naming the server
  store this home uses (never its password); the audit anchor beside it keeps this
  machine's view of the chain head, as it does next to a SQLite file.
- ``purge_deleted`` runs VACUUM on the tables that held the deleted text (purge.py): what
  a purge can mean on a server is in docs/postgres.md, "Forget in PostgreSQL".
- ``describe`` names psycopg, the server and the store's size on it for ``status``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg

from ....logs import get_logger
from ...core.errors import StoreError
from ..protocol import Connection, StoreInfo, VectorSupport
from .connection import PgConnection
from .database import Isolation, PostgresDatabase
from .purge import purge

__all__ = ["POINTER_FILENAME", "EngineDatabase"]

log = get_logger(__name__)

POINTER_FILENAME = "postgres.store"
# The tables that held a memory's text, and every vector table (vector_spaces).
_PURGED = ("memories", "keyword_docs", "keyword_postings", "keyword_terms")


class EngineDatabase(PostgresDatabase):
    """A ``postgresql://`` store opened for the engine, from a data home."""

    def __init__(self, url: str, home: Path, *, lock_timeout_ms: int = 30_000) -> None:
        super().__init__(url, lock_timeout_ms=lock_timeout_ms)
        self.busy_timeout_ms = lock_timeout_ms
        self.commit_hooks: list[Callable[[Connection], object]] = []
        self.created = 1 in self.applied  # this process made the schema: a new store
        self._versions = self.versions()
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._pointer = home / POINTER_FILENAME
        fd = os.open(self._pointer, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{self.where}, schema {self.schema}\n")

    @contextlib.contextmanager
    def write(self, isolation: Isolation = "serialized") -> Iterator[PgConnection]:
        with super().write(isolation) as tx:
            yield tx
        for hook in self.commit_hooks:  # committed: a failing hook is reported, not raised
            try:
                hook(tx)
            except (OSError, psycopg.Error) as exc:
                log.warning("commit_hook_failed", error=str(exc))

    @property
    def local_state(self) -> Path:
        return self._pointer

    def in_transaction(self) -> bool:
        return self.conn().in_transaction

    def vector_support(self) -> VectorSupport:
        return VectorSupport("pgvector", self._versions["pgvector"])

    def describe(self) -> StoreInfo:
        with self.read() as conn:
            size = conn.execute(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = ? AND c.relkind IN ('r', 'p', 'm')", (self.schema,),
            ).fetchone()[0]
        return StoreInfo(
            location=f"{self.where}, schema {self.schema}", size_bytes=int(size),
            schema_version=self.schema_version(), driver=f"psycopg {psycopg.__version__}",
            engine=f"PostgreSQL {self._versions['postgresql']}", journal="server",
        )

    def purge_deleted(self, *, wait_ms: int) -> bool:
        """Forget's purge: VACUUM the tables that held the deleted text. True when done;
        False (the purge is owed, retried after a later commit) if a transaction of this
        thread is open or the server refused."""
        if self.conn().in_transaction:
            return False
        with self.read() as conn:
            tables = [*_PURGED, *(str(t) for (t,) in conn.execute(
                "SELECT table_name FROM vector_spaces"))]
        try:
            purge(self, tables)
        except StoreError as exc:
            log.warning("purge_failed", error=str(exc), where=self.where)
            return False
        return True
