"""The SQLite file: opening it safely, connections, transactions, migrations.

One file per data home. WAL mode, a busy timeout, and short write transactions opened
with ``BEGIN IMMEDIATE`` let several processes write at once without "database is
locked". A file that is not ours, is corrupt, or comes from a newer version is refused
before anything writes to it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import struct
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from ...logs import get_logger
from ..core import clock
from ..core.errors import (
    ForeignDatabase,
    NewerSchema,
    StoreBusy,
    StoreError,
    StoreFull,
)
from . import sqlite_file
from .columns import add_column_statements
from .driver import Driver, load_driver, translate_error
from .migrations import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from .protocol import Connection, Dialect, StoreInfo, VectorSupport

__all__ = ["SqliteDatabase"]

log = get_logger(__name__)

_SQLITE_MAGIC = b"SQLite format 3\x00"
_PAGE_SIZE = 2048
_WAL_LIMIT_BYTES = 64 * 1024 * 1024


def _check_header(path: Path) -> None:
    """Refuse a file that is not SQLite, or whose pages were cut off, without opening it."""
    size = path.stat().st_size
    if size == 0:
        return
    with path.open("rb") as fh:
        header = fh.read(100)
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        raise ForeignDatabase(
            f"{path} is not a SQLite database (or its header is damaged); it was left "
            "untouched. Point AIDE_MEMOIRE_HOME at another folder, or move the file away"
        )
    page_size = struct.unpack(">H", header[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    change_counter, page_count = struct.unpack(">II", header[24:32])
    valid_for = struct.unpack(">I", header[92:96])[0]
    wal = path.with_name(path.name + "-wal")
    # With a WAL beside it, a checkpoint cut short (a crash) can leave the header ahead of
    # the file; SQLite finishes it from the WAL on open. Only a file on its own is judged.
    pending_wal = wal.exists() and wal.stat().st_size > 0
    if (
        not pending_wal
        and valid_for == change_counter
        and page_count
        and size < page_count * page_size
    ):
        raise ForeignDatabase(
            f"{path} is truncated ({size} bytes, its header says {page_count * page_size}); "
            "it was left untouched. Restore it from a snapshot or move it away"
        )


class SqliteDatabase:
    """A data home's SQLite file, with one connection per thread (a
    :class:`~.protocol.Database`)."""

    # The files this process has open through a Database. SQLite's locks are POSIX locks,
    # which a process never conflicts with itself on: a second SQLite library in the same
    # process (SQLCipher's, converting the file) would not see this one's, and its close
    # would drop them. Converting a file asks here first.
    _open_here: ClassVar[dict[Path, int]] = {}
    _open_here_lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def open_in_this_process(cls, path: Path) -> bool:
        with cls._open_here_lock:
            return cls._open_here.get(path.resolve(), 0) > 0

    # Which SQL the repositories speak to this database (engine/storage/protocol.py).
    dialect: Dialect = "sqlite"

    def __init__(
        self,
        path: Path,
        *,
        driver: Driver | None = None,
        busy_timeout_ms: int = 30_000,
        max_page_count: int | None = None,
    ) -> None:
        self.path = path
        self.driver = driver or load_driver()
        self.busy_timeout_ms = busy_timeout_ms
        self.max_page_count = max_page_count
        self.vec_version: str | None = None
        self._vec_error: str | None = None
        self._local = threading.local()
        self._connections: list[Any] = []
        self._lock = threading.Lock()
        self._write_lock = threading.RLock()
        self._closed = False
        # Called with the connection after each successful commit (the audit anchor).
        self.commit_hooks: list[Callable[[Connection], object]] = []
        # Called inside each write transaction: right after BEGIN, and just before COMMIT
        # (the audited fields' triggers and seals, trust/seal.py). An error in a
        # pre-commit hook rolls the transaction back like any error in it.
        self.begin_hooks: list[Callable[[Connection], object]] = []
        self.precommit_hooks: list[Callable[[Connection], object]] = []
        self.created = False  # True when this process made the file (a new store)
        self._made_dirs: list[Path] = []  # folders made for it, innermost first
        try:
            self._prepare_files()
            self._migrate()
        except BaseException as exc:
            self._abandon()
            if isinstance(exc, self.driver.Error | OSError):
                raise self._open_error(exc) from None
            raise
        with self._open_here_lock:
            key = self.path.resolve()
            self._open_here[key] = self._open_here.get(key, 0) + 1
        self._counted = True

    def _abandon(self) -> None:
        """Opening failed: close what was opened; a file this process created goes too
        (a 0-byte or half-made store would be judged 'corrupt' by the next process)."""
        self.close()
        if self.created:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(OSError):
                    os.unlink(f"{self.path}{suffix}")
        # The folders this process made for it go too, when nothing else is in them: an
        # empty home left behind on a full disk looks like a store that lost its file.
        for folder in self._made_dirs:
            with contextlib.suppress(OSError):
                folder.rmdir()

    def _open_error(self, exc: BaseException) -> BaseException:
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            return StoreFull(f"the disk holding {self.path} is full ({exc.strerror}); no store "
                             "was created. Free disk space or point AIDE_MEMOIRE_HOME elsewhere")
        if isinstance(exc, OSError):
            return StoreError(f"cannot open the store at {self.path}: {exc.strerror or exc}; "
                              "point AIDE_MEMOIRE_HOME at a folder where it can be made")
        return self.translate(exc, writing=False)

    # -- files -------------------------------------------------------------------------

    def _prepare_files(self) -> None:
        home = self.path.parent
        if not home.exists():
            self._made_dirs = [p for p in (home, *home.parents) if not p.exists()]
            home.mkdir(parents=True, mode=0o700)
            os.chmod(home, 0o700)
        if self.path.exists():
            if not self.driver.encrypted:  # an encrypted file's header is ciphertext
                _check_header(self.path)
            self._check_identity()
        else:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            os.close(fd)
            self.created = True
        if (self.path.stat().st_mode & 0o777) != 0o600:
            os.chmod(self.path, 0o600)

    def _check_identity(self) -> None:
        """Read-only look at an existing file: ours, and not from a newer version."""
        uri = f"file:{self.path}?mode=ro"
        try:
            conn = self.driver.connect(uri, uri=True, isolation_level=None)
        except self.driver.Error as exc:
            raise ForeignDatabase(
                f"{self.path} cannot be opened: {exc}; it was left untouched"
            ) from None
        try:
            # One statement, one read snapshot: as three, a process creating the store
            # could commit in between, and its tables would be seen beside application_id 0.
            app_id, version, tables, core = conn.execute(
                "SELECT (SELECT application_id FROM pragma_application_id), "
                "(SELECT user_version FROM pragma_user_version), "
                "(SELECT count(*) FROM sqlite_master), "
                "(SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                "AND name IN ('memories', 'schema_migrations', 'audit_events'))"
            ).fetchone()
        except MemoryError:
            # SQLite answers some damaged schema pages with SQLITE_NOMEM (a length read
            # from garbage); one small read-only query cannot exhaust memory otherwise.
            raise ForeignDatabase(
                f"{self.path} is corrupt (SQLite could not read its schema); it was left "
                "untouched. Restore it from a snapshot or move it away"
            ) from None
        except self.driver.DatabaseError as exc:
            known = self.translate(exc, writing=False)
            if isinstance(known, StoreFull | StoreBusy):  # the file is fine; the disk or a lock
                raise known from None
            raise ForeignDatabase(
                f"{self.path} is corrupt or not a database ({exc}); it was left untouched. "
                "Restore it from a snapshot or move it away"
            ) from None
        finally:
            conn.close()
        if app_id != APPLICATION_ID and (app_id != 0 or tables):
            raise ForeignDatabase(
                f"{self.path} is a SQLite database of another program; it was left untouched. "
                "Point AIDE_MEMOIRE_HOME at another folder"
            )
        if version > SCHEMA_VERSION:
            raise NewerSchema(
                f"{self.path} has schema version {version}, newer than this aide-memoire "
                f"understands ({SCHEMA_VERSION}); it was left untouched. Upgrade aide-memoire"
            )
        # Migration 1 makes memories and schema_migrations, migration 3 audit_events.
        if core < (3 if version >= 3 else 2 if version >= 1 else 0):
            raise ForeignDatabase(
                f"{self.path} says it is an aide-memoire store (schema {version}) but its "
                "tables are missing: it was damaged or crafted, and was left untouched. "
                "Restore a snapshot or move it away"
            )

    # -- connections -------------------------------------------------------------------

    def _open(self) -> Any:
        conn = self.driver.connect(
            str(self.path), isolation_level=None, check_same_thread=False, timeout=0
        )
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
        # Takes effect only on a new, empty file (a no-op afterwards): 2 kB pages keep a
        # fresh store, whose ~55 tables and indexes each start with one page, near 125 kB
        # instead of 300 kB, and measured no bigger at 1,000 memories (bench/store_size.py).
        # SQLCipher keeps its own page size (cipher_page_size, 4 kB), which every open
        # must use alike: an encrypted store is not given another.
        if not self.driver.encrypted:
            conn.execute(f"PRAGMA page_size = {_PAGE_SIZE}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            log.warning("wal_unavailable", journal_mode=mode)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        # Deleted or rewritten text is overwritten, not left in free space (see trust/forget.py).
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute(f"PRAGMA journal_size_limit = {_WAL_LIMIT_BYTES}")
        if self.max_page_count:
            conn.execute(f"PRAGMA max_page_count = {int(self.max_page_count)}")
        self._load_vec(conn)
        return conn

    def _load_vec(self, conn: Any) -> None:
        if not self.driver.can_load_extensions:
            self._vec_error = f"the {self.driver.name} driver cannot load extensions"
            return
        try:
            import sqlite_vec
        except ImportError:
            self._vec_error = "sqlite-vec is not installed (pip install 'aide-memoire[vectors]')"
            return
        try:
            conn.enable_load_extension(True)
            sqlite_vec.load(conn)
            conn.enable_load_extension(False)
            self.vec_version = conn.execute("SELECT vec_version()").fetchone()[0]
        except Exception as exc:  # noqa: BLE001 - any loader failure means keyword-only
            self._vec_error = f"sqlite-vec failed to load: {exc}"

    @property
    def vec_error(self) -> str | None:
        return None if self.vec_version else self._vec_error

    def vector_support(self) -> VectorSupport:
        self.driver_connection()  # sqlite-vec is loaded with the first connection
        return VectorSupport("sqlite-vec", self.vec_version, self.vec_error)

    @property
    def local_state(self) -> Path:
        return self.path

    def describe(self) -> StoreInfo:
        return StoreInfo(
            location=str(self.path), size_bytes=self.path.stat().st_size,
            schema_version=self.schema_version(), driver=self.driver.name,
            engine=self.driver.sqlite_version, journal=self.journal_mode(),
        )

    def conn(self) -> Connection:
        """This thread's connection (autocommit; use :meth:`write` for transactions)."""
        conn: Connection = self.driver_connection()
        return conn

    def in_transaction(self) -> bool:
        """True while this thread has a read or write transaction open."""
        return bool(self.driver_connection().in_transaction)

    def driver_connection(self) -> Any:
        """This thread's connection as the SQLite driver made it, with the driver's own
        extras (``in_transaction``, ``backup``): for SQLite-only code (snapshots)."""
        if self._closed:
            raise StoreError("the store is closed; open a new Memory")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    @contextlib.contextmanager
    def write(self) -> Iterator[Connection]:
        """A short ``BEGIN IMMEDIATE`` transaction; committed on success, rolled back on error.

        The one boundary for driver errors: any sqlite error raised inside the block, or
        by BEGIN and COMMIT, leaves as an error of our tree (see :meth:`translate`).
        """
        conn = self.driver_connection()
        with self._write_lock:
            if conn.in_transaction:
                # A read snapshot still open on this thread (an unfinished generator)
                # would make BEGIN fail with a raw driver error.
                raise StoreError(
                    "a read on this thread is still open (an unfinished export or "
                    "iteration); finish or close it before writing"
                )
            self._execute_guarded(conn, "BEGIN IMMEDIATE")
            try:
                for hook in self.begin_hooks:
                    hook(conn)
                yield conn
                for hook in self.precommit_hooks:
                    hook(conn)
            except BaseException as exc:
                # SQLite has already rolled back after some errors (disk full, I/O).
                self._rollback(conn)
                if isinstance(exc, self.driver.Error):
                    raise self.translate(exc) from exc
                raise
            try:
                self._execute_guarded(conn, "COMMIT")
            except BaseException:
                self._rollback(conn)
                raise
        for hook in self.commit_hooks:
            try:
                hook(conn)
            except (OSError, self.driver.Error) as exc:  # committed already: report, go on
                log.warning("commit_hook_failed", error=str(exc))

    def purge_deleted(self, *, wait_ms: int) -> bool:
        """Checkpoint the WAL into the file and truncate it (forget's purge: no deleted
        text left in the WAL; secure_delete already overwrote it in the file). Waits up to
        ``wait_ms`` for readers; False if one kept it."""
        conn = self.driver_connection()
        conn.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
        try:
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except self.driver.Error as exc:  # locked by a writer mid-checkpoint: try again later
            log.debug("checkpoint_failed", error=str(exc))
            busy = 1
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
        return not busy

    def _rollback(self, conn: Any) -> None:
        if conn.in_transaction:
            with contextlib.suppress(self.driver.Error):
                conn.execute("ROLLBACK")

    @contextlib.contextmanager
    def read(self) -> Iterator[Connection]:
        """A consistent snapshot for several reads (driver errors mapped as for writes)."""
        conn = self.driver_connection()
        if conn.in_transaction:
            yield conn
            return
        self._execute_guarded(conn, "BEGIN", writing=False)
        try:
            yield conn
        except self.driver.Error as exc:
            raise self.translate(exc, writing=False) from exc
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")

    def _execute_guarded(self, conn: Any, sql: str, *, writing: bool = True) -> None:
        try:
            conn.execute(sql)
        except self.driver.Error as exc:
            raise self.translate(exc, writing=writing) from exc

    def translate(self, exc: BaseException, *, writing: bool = True) -> BaseException:
        """Map a driver error to our tree by its result code (driver.translate_error)."""
        return translate_error(
            exc, where=str(self.path), error=self.driver.Error,
            integrity=self.driver.IntegrityError, busy_timeout_ms=self.busy_timeout_ms,
            writing=writing,
        )

    # -- schema ------------------------------------------------------------------------

    def _migrate(self) -> None:
        conn = self.conn()
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            self._add_declared_columns()
            return
        with self.write() as tx:
            version = tx.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise NewerSchema(
                    f"{self.path} has schema version {version}, newer than this aide-memoire "
                    f"understands ({SCHEMA_VERSION}). Upgrade aide-memoire"
                )
            if version == 0:
                tx.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            for step in MIGRATIONS:
                if step.version <= version:
                    continue
                log.info("migrate", version=step.version, name=step.name, path=str(self.path))
                step.apply(tx)
                tx.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (step.version, step.name, clock.format_time(clock.now())),
                )
                tx.execute(f"PRAGMA user_version = {step.version}")
        self._add_declared_columns()
        if version == 0:
            self._compact_new()

    def _add_declared_columns(self) -> None:
        """Columns of fields declared after the store was made (storage/columns.py)."""
        def missing(conn: Any) -> list[str]:
            present = [str(row[1]) for row in conn.execute("PRAGMA table_info(memories)")]
            return add_column_statements(present, "sqlite")

        if not missing(self.conn()):
            return
        with self.write() as tx:
            for statement in missing(tx):  # again under the lock: another process may have
                log.info("add_column", statement=statement, path=str(self.path))
                tx.execute(statement)

    def _compact_new(self) -> None:
        """A new store ran every step, some of which later steps undo (migration 10 drops
        the code index 4 and 5 made): fold the freed pages away so a new store is only as
        big as its live tables. The file is a few hundred kB here, so this is quick; an
        upgraded store keeps its few free pages for reuse instead of a full rewrite."""
        conn = self.driver_connection()
        if not conn.execute("PRAGMA freelist_count").fetchone()[0]:
            return
        try:
            with self._write_lock:
                conn.execute("VACUUM")
        except self.driver.Error as exc:  # another process is already using it: harmless
            log.info("new_store_not_compacted", path=str(self.path), reason=str(exc))

    # -- the file's copies and checks (storage/sqlite_file.py) --------------------------

    verify_file = staticmethod(sqlite_file.verify_file)
    hold_alone = staticmethod(sqlite_file.hold_alone)

    def backup(self, target: Path) -> str | None:
        """A consistent copy of the store in the empty file ``target``, safe while others
        write; what is wrong with the copy, or None."""
        return sqlite_file.backup(self.driver_connection(), self.driver, target, self.translate)

    def application_id(self) -> int:
        return sqlite_file.application_id(self.conn())

    def integrity(self, limit: int) -> list[str]:
        """SQLite's ``integrity_check``: up to ``limit`` problems, none when sound."""
        return sqlite_file.integrity(self.conn(), limit)

    def keyword_health(self) -> sqlite_file.KeywordHealth:
        return sqlite_file.keyword_health(self.conn(), self.driver.Error)

    @staticmethod
    def memory_count(conn: Connection) -> int:
        return sqlite_file.memory_count(conn)

    @staticmethod
    def clear_keyword_index(tx: Connection) -> None:
        sqlite_file.clear_keyword_index(tx)

    @staticmethod
    def vector_orphans(conn: Connection, table: str) -> list[tuple[int, str]]:
        return sqlite_file.vector_orphans(conn, table)

    @staticmethod
    def delete_vector_orphans(tx: Connection, key: str, table: str) -> int:
        return sqlite_file.delete_vector_orphans(tx, key, table)

    @property
    def closed(self) -> bool:
        return self._closed

    def journal_mode(self) -> str:
        """The file's journal mode as SQLite reports it ('wal' once opened here)."""
        return str(self.conn().execute("PRAGMA journal_mode").fetchone()[0])

    def schema_version(self) -> int:
        version: int = self.conn().execute("PRAGMA user_version").fetchone()[0]
        return version

    def close(self) -> None:
        if getattr(self, "_counted", False):
            self._counted = False
            with self._open_here_lock:
                key = self.path.resolve()
                self._open_here[key] -= 1
        with self._lock:
            for conn in self._connections:
                with contextlib.suppress(Exception):
                    conn.close()
            self._connections.clear()
            self._closed = True
        self._local = threading.local()
