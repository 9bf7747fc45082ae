"""A psycopg connection as the engine's :class:`~aide_memoire.engine.storage.protocol.Connection`.

The engine writes SQL with SQLite's placeholders (``?``, or ``:name`` with a mapping);
psycopg wants ``%s`` / ``%(name)s`` and reads every other ``%`` as one. ``translate``
rewrites a statement once (cached): placeholders outside string literals, quoted names,
dollar-quoted bodies and comments (a ``?`` inside text is text), and every ``%`` doubled.

SQLite gives every insert a ``lastrowid``; PostgreSQL answers only what ``RETURNING``
asks for. An insert into a table whose key the server generates (``IDENTITY_KEYS``)
without its own ``RETURNING`` gets one for that key, so ``cursor.lastrowid`` means the
same on both backends. Driver errors leave as errors of the project's tree.
"""

from __future__ import annotations

import contextlib
import functools
import re
import struct
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg
from psycopg.abc import Buffer
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format

from ..protocol import Connection, Dialect, Params
from .errors import translate as translate_error

__all__ = [
    "IDENTITY_KEYS", "PgConnection", "PgCursor", "PgVector", "VectorBinaryLoader", "VectorDumper",
    "VectorLoader", "reads_vectors", "register_vector", "translate",
]

# Tables whose key PostgreSQL generates (SQLite's INTEGER PRIMARY KEY), by key column.
IDENTITY_KEYS: dict[str, str] = {"memories": "rowid", "entities": "id", "facts": "id"}

_INSERT = re.compile(r"^\s*INSERT\s+INTO\s+([A-Za-z_][A-Za-z0-9_]*)\b", re.IGNORECASE)
_RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)
_DOLLAR_TAG = re.compile(r"\$[A-Za-z_0-9]*\$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@functools.lru_cache(maxsize=2048)
def translate(sql: str, named: bool = False) -> str:
    """``sql`` with qmark (or, when ``named``, ``:name``) placeholders in psycopg's style."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        end = _skip_quoted(sql, i)
        if end > i:
            # psycopg reads '%' everywhere, inside literals too.
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif ch == "?" and not named:
            out.append("%s")
            i += 1
        elif ch == "%":
            out.append("%%")
            i += 1
        elif ch == ":" and named and _is_named_param(sql, i):
            match = _NAME.match(sql, i + 1)
            assert match is not None
            out.append(f"%({match.group(0)})s")
            i = match.end()
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _skip_quoted(sql: str, i: int) -> int:
    """The end of a literal, quoted name or comment starting at ``i`` (``i`` if none)."""
    ch = sql[i]
    if ch in ("'", '"'):
        j = i + 1
        while j < len(sql):
            if sql[j] == ch:
                if j + 1 < len(sql) and sql[j + 1] == ch:  # '' or "" inside: an escape
                    j += 2
                    continue
                return j + 1
            j += 1
        return len(sql)
    if sql.startswith("--", i):
        newline = sql.find("\n", i)
        return len(sql) if newline < 0 else newline + 1
    if sql.startswith("/*", i):
        close = sql.find("*/", i + 2)
        return len(sql) if close < 0 else close + 2
    if ch == "$":
        tag = _DOLLAR_TAG.match(sql, i)
        if tag and not sql[i - 1 : i].isalnum():
            close = sql.find(tag.group(0), tag.end())
            return len(sql) if close < 0 else close + len(tag.group(0))
    return i


def _is_named_param(sql: str, i: int) -> bool:
    # '::' is a cast, 'a:b' inside a name is not a parameter.
    before = sql[i - 1] if i else " "
    after = sql[i + 1] if i + 1 < len(sql) else " "
    return before != ":" and after != ":" and (after.isalpha() or after == "_")


@functools.lru_cache(maxsize=2048)
def with_returning(sql: str) -> tuple[str, bool]:
    """The statement, with ``RETURNING key`` added where SQLite would set lastrowid."""
    match = _INSERT.match(sql)
    if match is None or _RETURNING.search(sql):
        return sql, False
    key = IDENTITY_KEYS.get(match.group(1).lower())
    if key is None:
        return sql, False
    return f"{sql.rstrip().rstrip(';')} RETURNING {key}", True


class VectorLoader(Loader):
    """pgvector's ``vector`` read as float32 bytes: what sqlite-vec hands back, so code
    reading vectors (the mirror, de-duplication) reads both backends alike."""

    def load(self, data: Buffer) -> bytes:
        text = bytes(data).decode("ascii").strip("[]")
        return np.array(text.split(",") if text else [], dtype=np.float32).tobytes()


class VectorBinaryLoader(Loader):
    """The same bytes from pgvector's binary output (vector_send: int16 dimensions,
    int16 zero, big-endian float32s): no text to parse, which cost about 0.3 ms per
    384-dimension vector, 30 s for a mirror's first load of 100k rows."""

    format = Format.BINARY

    def load(self, data: Buffer) -> bytes:
        return np.frombuffer(bytes(data), dtype=">f4", offset=4).astype(np.float32).tobytes()


# A statement reading vectors (the mirror's loads, de-duplication, one memory's vector)
# asks for binary results; every column those read (integers, text, floats, vectors) has
# a binary loader giving the same Python value as its text one.
_VECTOR_READ = re.compile(r"^\s*SELECT\b.*\bembedding\b.*\bmemory_vec_", re.IGNORECASE | re.DOTALL)


@functools.lru_cache(maxsize=2048)
def reads_vectors(sql: str) -> bool:
    return _VECTOR_READ.match(sql) is not None


class PgVector:
    """A vector parameter, sent to pgvector in its binary form (``PgVector(array)``).

    The text form costs a ``repr`` per float here and a parse per float on the server:
    at 384 dimensions that was a fifth of a memory's write time on PostgreSQL."""

    __slots__ = ("values",)

    def __init__(self, values: Any) -> None:
        self.values = np.ascontiguousarray(values, dtype=">f4").ravel()


class VectorDumper(Dumper):
    """pgvector's binary input (vector_recv): int16 dimensions, int16 zero, then the
    float32 values, all big-endian."""

    format = Format.BINARY

    def dump(self, obj: PgVector) -> bytes:
        return struct.pack(">HH", obj.values.size, 0) + obj.values.tobytes()


def register_vector(raw: psycopg.Connection[Any]) -> bool:
    """Read ``vector`` columns as bytes and send :class:`PgVector` parameters as binary
    ``vector`` values on this connection; False while the database has no pgvector yet
    (a new store, before its schema step 2)."""
    # One plain lookup: psycopg's TypeInfo.fetch costs a savepoint and a catalogue join,
    # twice the time of opening the connection itself, and every process (each hook)
    # pays it when it opens the store.
    found = raw.execute("SELECT to_regtype('vector')::oid").fetchone()
    if found is None or found[0] is None:
        return False
    oid = int(found[0])
    raw.adapters.register_loader(oid, VectorLoader)
    raw.adapters.register_loader(oid, VectorBinaryLoader)
    dumper = type("VectorDumper", (VectorDumper,), {"oid": oid})
    raw.adapters.register_dumper(PgVector, dumper)
    return True


class PgCursor:
    """One statement's result, shaped as SQLite's cursor (no rows: ``fetchone`` is None)."""

    def __init__(
        self, cursor: psycopg.Cursor[Any], lastrowid: int | None, conn: PgConnection
    ) -> None:
        self._cursor = cursor
        self._lastrowid = lastrowid
        self._conn = conn

    def _ready(self) -> None:
        # Pipelined (a write transaction): the result may still be on its way; ask for it
        # only now, when the caller looks at it.
        if self._cursor.pgresult is None:
            self._conn.sync()

    @property
    def rowcount(self) -> int:
        self._ready()
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._lastrowid

    def _has_rows(self) -> bool:
        self._ready()
        return self._cursor.description is not None

    def fetchone(self) -> Any:
        return self._cursor.fetchone() if self._has_rows() else None

    def fetchall(self) -> list[Any]:
        return self._cursor.fetchall() if self._has_rows() else []

    def fetchmany(self, size: int = 1) -> list[Any]:
        return self._cursor.fetchmany(size) if self._has_rows() else []

    def __iter__(self) -> Iterator[Any]:
        if self._has_rows():
            yield from self._cursor


class PgConnection:
    """A psycopg connection (autocommit; transactions opened by PostgresDatabase)."""

    dialect: Dialect = "postgres"

    def __init__(self, raw: psycopg.Connection[Any], where: str) -> None:
        self.raw = raw
        self.where = where
        self.vectors = False  # pgvector's adapters registered (register_vector)
        self._pipe: contextlib.AbstractContextManager[psycopg.Pipeline] | None = None
        self._pipeline: psycopg.Pipeline | None = None
        # The open read-only snapshot's memo (snapshot.py); None in any other state.
        self.memo: dict[Hashable, Any] | None = None

    # -- pipeline mode ---------------------------------------------------------------
    # A write sends several statements per memory whose results nobody reads (index
    # rows, the audit event, counters). In pipeline mode they go without waiting for the
    # server's answer; a statement whose result is read (a lookup, RETURNING) waits for
    # everything before it. An error of an unread statement surfaces at the next read
    # or at the end of the transaction, which then rolls back whole, as before.

    @contextlib.contextmanager
    def pipelined(self) -> Iterator[PgConnection]:
        """Run the block's statements in pipeline mode (inside a transaction)."""
        if self._pipe is not None:
            yield self
            return
        self._enter_pipeline()
        try:
            yield self
        except BaseException as exc:
            self._leave_pipeline(exc)
            raise
        self._leave_pipeline(None)

    def _enter_pipeline(self) -> None:
        self._pipe = self.raw.pipeline()
        self._pipeline = self._pipe.__enter__()

    def _leave_pipeline(self, error: BaseException | None) -> None:
        pipe, self._pipe, self._pipeline = self._pipe, None, None
        if pipe is None:
            return
        if error is not None:  # the block failed: its error is the one to report
            with contextlib.suppress(psycopg.Error):
                pipe.__exit__(type(error), error, error.__traceback__)
            return
        try:
            pipe.__exit__(None, None, None)  # a last sync: any unread error raises here
        except psycopg.Error as exc:
            raise translate_error(exc, self.where) from exc

    def sync(self) -> None:
        """Wait for every result sent so far (pipeline mode; otherwise nothing to do)."""
        if self._pipeline is None:
            return
        try:
            self._pipeline.sync()
        except psycopg.Error as exc:
            raise translate_error(exc, self.where) from exc

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE

    def execute(self, sql: str, parameters: Params = (), /) -> PgCursor:
        named = isinstance(parameters, Mapping)
        statement, returning = with_returning(sql)
        cursor = self.raw.cursor(binary=self.vectors and reads_vectors(statement))
        try:
            cursor.execute(translate(statement, named), _params(parameters))
        except psycopg.Error as exc:
            raise translate_error(exc, self.where) from exc
        lastrowid = None
        if returning:
            row = cursor.fetchone()
            lastrowid = int(row[0]) if row else None
        return PgCursor(cursor, lastrowid, self)

    def executemany(self, sql: str, parameters: Iterable[Params], /) -> PgCursor:
        batch = list(parameters)
        named = bool(batch) and isinstance(batch[0], Mapping)
        cursor = self.raw.cursor()
        try:
            cursor.executemany(translate(sql, named), [_params(p) for p in batch])
        except psycopg.Error as exc:
            raise translate_error(exc, self.where) from exc
        return PgCursor(cursor, None, self)

    @contextlib.contextmanager
    def outside_pipeline(self) -> Iterator[psycopg.Connection[Any]]:
        """The raw connection out of pipeline mode for the block (same transaction), for
        what a pipeline does not allow: a script's simple protocol, COPY."""
        pipelined = self._pipe is not None
        if pipelined:
            self._leave_pipeline(None)
        try:
            yield self.raw
        finally:
            if pipelined:
                self._enter_pipeline()

    def executescript(self, sql: str) -> None:
        """Several statements at once, with no parameters (schema steps, as SQLite's)."""
        with self.outside_pipeline() as raw:
            try:
                raw.execute(sql.encode())
            except psycopg.Error as exc:
                raise translate_error(exc, self.where) from exc


def _params(parameters: Params) -> Sequence[Any] | Mapping[str, Any]:
    if isinstance(parameters, Mapping):
        return dict(parameters)
    return tuple(parameters)


if TYPE_CHECKING:

    def _is_a_connection(conn: PgConnection) -> Connection:
        return conn  # mypy checks the adapter against the engine's protocol here
