"""A PostgresDatabase with what the engine reads of a store besides its transactions.

The engine was built on SQLite's :class:`~aide_memoire.engine.storage.db.Database`; beyond
``write`` / ``read`` / ``conn`` its parts read a few attributes of it: ``path`` (the audit
anchor and forget's purge marker live beside it), ``created``, ``commit_hooks`` (the
anchor advances after each commit), ``vec_version`` (dense recall's status),
``checkpoint`` (forget's purge), ``driver`` / ``journal_mode`` (``status``).
:class:`EngineDatabase` answers them for a server:

- ``path`` is a small file in the data home, ``postgres.store``, naming the server store
  this home uses (never its password); the audit anchor beside it keeps this machine's
  view of the chain head, as it does next to a SQLite file.
- ``checkpoint`` runs VACUUM on the tables that held the deleted text (purge.py): what a
  purge can mean on a server is in docs/postgres.md, "Forget in PostgreSQL".
- ``driver`` names psycopg and the server; ``status`` shows them where it shows SQLite's.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg

from ....logs import get_logger
from ...core.errors import StoreError
from ..protocol import Connection
from .connection import PgConnection
from .database import Isolation, PostgresDatabase
from .purge import purge

__all__ = ["POINTER_FILENAME", "EngineDatabase", "ServerDriver"]

log = get_logger(__name__)

POINTER_FILENAME = "postgres.store"
# The tables that held a memory's text, and every vector table (vector_spaces).
_PURGED = ("memories", "keyword_docs", "keyword_postings")


@dataclass(frozen=True)
class ServerDriver:
    """What ``status`` and ``doctor`` read of a driver, for a server store."""

    name: str
    sqlite_version: str  # the field status shows the engine under: the server here
    can_load_extensions: bool = False

    @property
    def Error(self) -> type[Exception]:  # noqa: N802 - mirrors the DB-API name
        return psycopg.Error


class EngineDatabase(PostgresDatabase):
    """A ``postgresql://`` store opened for the engine, from a data home."""

    def __init__(self, url: str, home: Path, *, lock_timeout_ms: int = 30_000) -> None:
        super().__init__(url, lock_timeout_ms=lock_timeout_ms)
        self.busy_timeout_ms = lock_timeout_ms
        self.commit_hooks: list[Callable[[Connection], object]] = []
        self.created = 1 in self.applied  # this process made the schema: a new store
        versions = self.versions()
        self.vec_version: str | None = versions["pgvector"]
        self.vec_error: str | None = None
        self.driver = ServerDriver(
            name=f"psycopg {psycopg.__version__}",
            sqlite_version=f"PostgreSQL {versions['postgresql']}",
        )
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = home / POINTER_FILENAME
        fd = os.open(self.path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
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

    def in_transaction(self) -> bool:
        return self.conn().in_transaction

    def journal_mode(self) -> str:
        return "postgresql"  # no journal file: the server's WAL

    def checkpoint(self, *, wait_ms: int) -> bool:
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
