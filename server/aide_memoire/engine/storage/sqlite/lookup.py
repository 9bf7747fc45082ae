"""A read-only keyword lookup on a SQLite store, for a process that lives for one prompt.

The prompt hook without a warm daemon must answer in well under a quarter of a second,
and importing the engine (pydantic, numpy, the trust screen) costs more than that. This
module and what it imports are the standard library, the SQLite driver and the light
storage modules whose SQL recall itself runs (the FTS5 search of ``keyword.py``, the
usage read of ``memory_queries.py``, the filter of ``filters.py``), so the hook's keyword
answer comes from the same statements as the engine's. It never writes: the file is
opened with ``mode=ro`` and ``query_only``.

``open_lookup`` returns None where the lookup cannot stand in for the engine (no store
yet, a file that is not an aide-memoire store, an encrypted or unreadable one): the
caller then asks the engine, which says what is wrong.
"""

from __future__ import annotations

import importlib
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..filter import RowFilter
from ..portable.memory_queries import MemoryQueries
from ..protocol import Connection
from .filters import passing
from .keyword import SqliteKeywordIndex

__all__ = ["APPLICATION_ID", "KeywordLookup", "LookupRow", "open_lookup"]

# engine/storage/migrations.py APPLICATION_ID (that module imports every schema step,
# more than the cold path should load; tests/hooks/test_cold_path.py pins the two equal).
APPLICATION_ID = 0x41494D45
_DRIVERS = ("sqlean", "pysqlite3.dbapi2", "sqlite3")  # engine/storage/driver.py's order
_BUSY_MS = 500


@dataclass(frozen=True)
class LookupRow:
    """What a prompt's injected line and the session rules read of one memory."""

    rowid: int
    id: str
    namespace: str
    content: str
    kind: str
    speaker: str | None
    session_id: str | None
    observed_at: str | None
    created_at: str


def _driver(preferred: str | None) -> Any:
    names = _DRIVERS if not preferred else (
        "pysqlite3.dbapi2" if preferred == "pysqlite3" else preferred,)
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _uri_path(path: Path) -> str:
    # The characters a SQLite URI gives a meaning to (urllib.parse costs more to import
    # than this hook spends on its answer).
    text = str(path.resolve())
    for char, escaped in (("%", "%25"), ("?", "%3f"), ("#", "%23")):
        text = text.replace(char, escaped)
    return text


def open_lookup(path: Path, driver: str | None = None) -> KeywordLookup | None:
    """A lookup on the store at ``path``, opened read-only, or None (see the module)."""
    if not path.is_file():
        return None
    module = _driver(driver)
    if module is None:
        return None
    try:
        conn = module.connect(f"file:{_uri_path(path)}?mode=ro", uri=True,
                              check_same_thread=False)
    except module.Error:
        return None
    try:
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        conn.execute("PRAGMA query_only = 1")
        (app,) = conn.execute("SELECT application_id FROM pragma_application_id").fetchone()
        tables = {name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE name IN ('memories', 'memory_fts')")}
    except module.Error:  # encrypted ("file is not a database"), locked, damaged
        conn.close()
        return None
    if app != APPLICATION_ID or tables != {"memories", "memory_fts"}:
        conn.close()
        return None
    return KeywordLookup(conn, module.Error)


class KeywordLookup(MemoryQueries):
    """The reads recall's keyword side makes, shaped as the store's (each takes the
    connection), on one read-only connection: ``conn``."""

    def __init__(self, conn: Connection, error: type[Exception]) -> None:
        self.conn = conn
        self.Error = error  # noqa: N815 - the driver's DB-API name
        self.keywords = SqliteKeywordIndex()

    def close(self) -> None:
        closing: Any = self.conn  # the driver's connection; the Protocol has no close()
        closing.close()

    def document_counts(self, conn: Connection, terms: Sequence[str], cap: int) -> dict[str, int]:
        return self.keywords.document_counts(conn, terms, cap)

    def write_marker(self, conn: Connection) -> Hashable:
        return self.keywords.write_marker(conn)

    def common_terms(self, conn: Connection, terms: Sequence[str], threshold: int) -> set[str]:
        """Terms in more than ``threshold`` memories (as the store's ``common_terms``)."""
        counts = self.document_counts(conn, terms, threshold + 1)
        return {term for term, count in counts.items() if count > threshold}

    def keyword_search(self, conn: Connection, match: str, where: RowFilter, limit: int,
                       weights: Sequence[float]) -> list[tuple[int, float]]:
        """(rowid, -bm25) best first: the very statement recall's keyword side runs."""
        return self.keywords.search(conn, match, where, limit, weights)

    def passing(self, conn: Connection, rowids: Iterable[int], where: RowFilter) -> set[int]:
        return passing(conn, rowids, where)

    def speakers(self, conn: Connection, rowids: Iterable[int]) -> dict[int, str]:
        """Speaker of each given row that has one (as the store's ``speakers``)."""
        return {r: row.speaker for r, row in self.rows(conn, rowids).items()
                if row.speaker is not None}

    def rows(self, conn: Connection, rowids: Iterable[int]) -> dict[int, LookupRow]:
        """What an injected line needs of each row."""
        ids = list(dict.fromkeys(rowids))
        out: dict[int, LookupRow] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            for values in conn.execute(
                "SELECT rowid, id, namespace, content, kind, speaker, session_id, observed_at, "
                f"created_at FROM memories WHERE rowid IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                out[int(values[0])] = LookupRow(int(values[0]), *values[1:])
        return out
