"""The memories table as both backends write it: rows, status and validity, listing.

Every statement here runs as written on SQLite and PostgreSQL (the connection adapter
turns ``?`` into psycopg's placeholders and answers ``lastrowid`` through ``RETURNING``).
What a dialect writes its own way (``json_each`` against ``json``, ``IS ?`` against
``IS NOT DISTINCT FROM``, the row filter, the keyword and vector indexes) is in each
backend's subclass: storage/sqlite/memory_rows.py, storage/postgres/memories.py. Every
method that writes takes the open transaction (``tx``) so that a row and its indexes
always change together. ``rowid`` is the row's integer key: the indexes are keyed by it.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Hashable, Iterable, Sequence
from datetime import datetime
from typing import Any

from ...core import clock
from ...core.compose import FtsDoc, fts_document, turn_line
from ...core.models import MemoryRecord
from ..protocol import Connection
from ..repositories import KeywordIndex, VectorIndex
from ..rows import (
    COLUMNS,
    FIXED,
    NewRow,
    RowFilter,
    StoredTurn,
    content_hash,
    encode,
    indexed,
    insert_values,
    inserted_rowid,
    record_from_row,
    record_values,
)
from .memory_queries import MemoryQueries

__all__ = ["PortableMemoryRows"]

_SELECT = ", ".join(COLUMNS)
_MARKS = ",".join("?" * len(COLUMNS))

# A RowFilter rendered as a WHERE fragment (without WHERE) and its parameters.
Render = Callable[[RowFilter, str], tuple[str, builtins.list[Any]]]


class PortableMemoryRows(MemoryQueries):
    """The ``memories`` table and, through the keyword and vector indexes, the indexes
    that change with a row. Knows nothing of validation policy or ranking. A backend
    subclass sets the two indexes and ``render`` and adds its dialect's statements."""

    vectors: VectorIndex
    keywords: KeywordIndex
    render: Render
    # The dialect's fragments for the statements below that differ only in them:
    # ``same_slot``, session_id and position equal to two parameters, NULL matching NULL;
    # ``id_in``, an id among one parameter's list (as ``ids_param`` passes it);
    # ``holds``, the metadata text containing the parameter; ``citing_order``, the end of
    # ``summaries_citing``'s statement.
    same_slot: str
    id_in: str
    holds: str
    citing_order: str = ""

    @staticmethod
    def ids_param(ids: builtins.list[str]) -> object:
        return ids

    def find_exact(
        self,
        conn: Connection,
        namespace: str,
        content: str,
        kind: str,
        session_id: str | None,
        position: int | None,
    ) -> str | None:
        """An active or quarantined memory with the same text (and the same turn slot)."""
        found = conn.execute(
            "SELECT id FROM memories WHERE namespace = ? AND content_hash = ? AND kind = ? "
            f"AND status IN ('active', 'quarantined') AND {self.same_slot} LIMIT 1",
            (namespace, content_hash(content), kind, session_id, position),
        ).fetchone()
        return str(found[0]) if found else None

    def summaries_citing(
        self, conn: Connection, namespace: str, memory_id: str, linked: Iterable[str]
    ) -> builtins.list[tuple[int, str, str]]:
        """(rowid, id, metadata JSON) of the namespace's summaries whose id is in ``linked``
        or whose metadata names ``memory_id`` (a cheap text test; the caller parses)."""
        return [
            (int(r), str(i), str(m))
            for r, i, m in conn.execute(
                "SELECT rowid, id, metadata FROM memories WHERE namespace = ? "
                f"AND kind = 'summary' AND ({self.id_in} OR {self.holds}){self.citing_order}",
                (namespace, self.ids_param(sorted(linked)), json.dumps(memory_id)),
            )
        ]

    def insert(
        self, tx: Connection, row: NewRow, *, at: datetime | None = None, index: bool = True
    ) -> tuple[int, str]:
        """Insert a row (and, unless the caller re-indexes its session, its keyword doc)."""
        memory_id = row.id or clock.new_id()
        cursor = tx.execute(
            f"INSERT INTO memories ({_SELECT}) VALUES ({_MARKS})",
            insert_values(row, memory_id, at or clock.now()),
        )
        rowid = inserted_rowid(cursor)
        if index:
            self._index(tx, rowid, fts_document(indexed(row)))
        return rowid, memory_id

    def insert_record(self, tx: Connection, record: MemoryRecord) -> bool:
        """Insert an exported record as it was (import). False if its id already exists."""
        if tx.execute("SELECT 1 FROM memories WHERE id = ?", (record.id,)).fetchone():
            return False
        cursor = tx.execute(
            f"INSERT INTO memories ({_SELECT}) VALUES ({_MARKS})", record_values(record)
        )
        rowid = inserted_rowid(cursor)
        if record.session_id is not None and record.position is not None:
            self.index_turns(tx, record.namespace, record.session_id, [record.position])
        else:
            self._index(tx, rowid, fts_document(indexed(record)))
        return True

    def _index(self, tx: Connection, rowid: int, doc: FtsDoc) -> None:
        self.keywords.add(tx, rowid, doc)

    def index_turns(
        self, tx: Connection, namespace: str, session_id: str, positions: Iterable[int]
    ) -> None:
        """(Re)build the keyword docs of a session's turns at ``positions`` and of the
        turns up to three before and after them, whose docs quote these as neighbours."""
        wanted = sorted(set(positions))
        if not wanted:
            return
        low, high = wanted[0] - 3, wanted[-1] + 3
        rows = tx.execute(
            f"SELECT rowid, {_SELECT} FROM memories WHERE namespace = ? AND session_id = ? "
            "AND position BETWEEN ? AND ?",
            (namespace, session_id, low - 3, high + 3),
        ).fetchall()
        by_position: dict[int, tuple[int, MemoryRecord]] = {}
        for values in rows:
            record = record_from_row(values[1:])
            if record.position is not None:
                by_position[record.position] = (int(values[0]), record)
        lines = {p: turn_line(r.speaker, r.content) for p, (_, r) in by_position.items()}
        for position in range(low, high + 1):
            if position not in by_position:
                continue
            rowid, record = by_position[position]
            near = {o: lines[position + o] for o in (-3, -2, -1, 1, 2, 3) if position + o in lines}
            self.keywords.remove(tx, rowid)
            self._index(tx, rowid, fts_document(indexed(record), near))

    def index_all(
        self, tx: Connection, batch: int = 500,
        progress: Callable[[int, int], object] | None = None,
    ) -> int:
        """Write every memory's keyword document (into an index holding none of them:
        doctor's rebuild, a copied store), turns with their neighbours; returns the count.
        ``progress(done, total)`` after each batch of memories read."""
        rowids = [int(r) for (r,) in tx.execute("SELECT rowid FROM memories ORDER BY rowid")]
        sessions: dict[tuple[str, str], list[int]] = {}
        for start in range(0, len(rowids), batch):
            for rowid, record in self.records(tx, rowids[start : start + batch]).items():
                if record.session_id is not None and record.position is not None:
                    sessions.setdefault((record.namespace, record.session_id), []).append(
                        record.position)
                else:
                    self._index(tx, rowid, fts_document(indexed(record)))
            if progress is not None:
                progress(min(start + batch, len(rowids)), len(rowids))
        for (namespace, session_id), positions in sessions.items():
            self.index_turns(tx, namespace, session_id, positions)
        return len(rowids)

    def reindex(self, tx: Connection, rowid: int) -> None:
        record = self.get_by_rowid(tx, rowid)
        if record is None:
            self.keywords.remove(tx, rowid)
        elif record.session_id is not None and record.position is not None:
            self.index_turns(tx, record.namespace, record.session_id, [record.position])
        else:
            self.keywords.remove(tx, rowid)
            self._index(tx, rowid, fts_document(indexed(record)))

    def session_tail(
        self, conn: Connection, namespace: str, session_id: str, count: int
    ) -> list[StoredTurn]:
        """The last ``count`` (at least one) stored turns of a session, oldest first."""
        rows = conn.execute(
            "SELECT id, position, speaker, content FROM memories WHERE namespace = ? "
            "AND session_id = ? AND position IS NOT NULL ORDER BY position DESC LIMIT ?",
            (namespace, session_id, max(1, count)),
        ).fetchall()
        return [StoredTurn(str(i), int(p), s, str(c)) for i, p, s, c in reversed(rows)]

    def get(self, conn: Connection, memory_id: str, namespace: str) -> MemoryRecord | None:
        found = conn.execute(
            f"SELECT {_SELECT} FROM memories WHERE id = ? AND namespace = ?",
            (memory_id, namespace),
        ).fetchone()
        return record_from_row(found) if found else None

    def get_by_rowid(self, conn: Connection, rowid: int) -> MemoryRecord | None:
        found = conn.execute(f"SELECT {_SELECT} FROM memories WHERE rowid = ?", (rowid,)).fetchone()
        return record_from_row(found) if found else None

    def identity(self, conn: Connection, rowid: int) -> tuple[str, str, str] | None:
        """(id, namespace, content hash) of a row, without reading its text."""
        found = conn.execute(
            "SELECT id, namespace, content_hash FROM memories WHERE rowid = ?", (rowid,)
        ).fetchone()
        return (str(found[0]), str(found[1]), str(found[2])) if found else None

    def rowid_hash_in_status(
        self, conn: Connection, memory_id: str, namespace: str, status: str
    ) -> tuple[int, str] | None:
        """(rowid, content hash) of a memory if it has ``status``."""
        found = conn.execute(
            "SELECT rowid, content_hash FROM memories WHERE id = ? AND namespace = ? "
            "AND status = ?",
            (memory_id, namespace, status),
        ).fetchone()
        return (int(found[0]), str(found[1])) if found else None

    def rowids(self, conn: Connection, where: RowFilter, limit: int) -> builtins.list[int]:
        """Rowids passing ``where``, oldest first, at most ``limit``."""
        clause, params = self.render(where, "m")
        return [
            int(r[0])
            for r in conn.execute(
                f"SELECT m.rowid FROM memories m WHERE {clause} ORDER BY m.rowid LIMIT ?",
                [*params, limit],
            )
        ]

    def rowid_of(self, conn: Connection, memory_id: str, namespace: str) -> int | None:
        found = conn.execute(
            "SELECT rowid FROM memories WHERE id = ? AND namespace = ?", (memory_id, namespace)
        ).fetchone()
        return int(found[0]) if found else None

    def records(self, conn: Connection, rowids: Iterable[int]) -> dict[int, MemoryRecord]:
        ids = list(rowids)
        out: dict[int, MemoryRecord] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for values in conn.execute(
                f"SELECT rowid, {_SELECT} FROM memories WHERE rowid IN "
                f"({','.join('?' * len(chunk))})",
                chunk,
            ):
                out[int(values[0])] = record_from_row(values[1:])
        return out

    def speakers(self, conn: Connection, rowids: Iterable[int]) -> dict[int, str]:
        """Speaker of each given row that has one."""
        ids = list(rowids)
        out: dict[int, str] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            out.update(
                (int(r), str(s))
                for r, s in conn.execute(
                    f"SELECT rowid, speaker FROM memories WHERE speaker IS NOT NULL AND rowid IN "
                    f"({','.join('?' * len(chunk))})",
                    chunk,
                )
            )
        return out

    def common_terms(self, conn: Connection, terms: Sequence[str], threshold: int) -> set[str]:
        """Terms found in more than ``threshold`` memories (store-wide).

        Counting stops at threshold + 1 and reads rowids only (no ranking), so the check
        costs little however common a term is; the FTS tokenizer stems as it would in
        the search itself.
        """
        counts = self.document_counts(conn, terms, threshold + 1)
        return {term for term, count in counts.items() if count > threshold}

    def document_counts(self, conn: Connection, terms: Sequence[str], cap: int) -> dict[str, int]:
        """Memories holding each term, counted up to ``cap`` (see the keyword index)."""
        return self.keywords.document_counts(conn, terms, cap)

    def write_marker(self, conn: Connection) -> Hashable | None:
        """The keyword index's write marker (see the keyword index)."""
        return self.keywords.write_marker(conn)

    def update_fields(self, tx: Connection, rowid: int, fields: dict[str, Any]) -> None:
        """Set columns by name; the keyword index follows in the same transaction."""
        encoded: dict[str, Any] = {}
        for key, value in fields.items():
            if key not in COLUMNS or key in FIXED:
                raise ValueError(f"cannot update column {key!r}")
            encoded[key] = encode(key, value)
        if "content" in encoded:
            encoded["content_hash"] = content_hash(encoded["content"])
        encoded["updated_at"] = clock.format_time(clock.now())
        assignments = ", ".join(f"{key} = ?" for key in encoded)
        tx.execute(f"UPDATE memories SET {assignments} WHERE rowid = ?", [*encoded.values(), rowid])
        self.reindex(tx, rowid)

    def delete(self, tx: Connection, rowid: int) -> None:
        """Remove a memory from the rows, the keyword index and every vector space."""
        found = tx.execute(
            "SELECT namespace, session_id, position FROM memories WHERE rowid = ?", (rowid,)
        ).fetchone()
        if found is None:
            return
        namespace, session_id, position = found
        self.vectors.delete(tx, rowid, str(namespace))
        self.keywords.remove(tx, rowid)
        tx.execute("DELETE FROM memories WHERE rowid = ?", (rowid,))
        if session_id is not None and position is not None:
            # Neighbours quoted this turn in their docs: rebuild them without it.
            self.index_turns(tx, str(namespace), str(session_id), [int(position)])

    def list(self, conn: Connection, where: RowFilter, limit: int) -> list[MemoryRecord]:
        clause, params = self.render(where, "m")
        rows = conn.execute(
            f"SELECT {', '.join('m.' + c for c in COLUMNS)} FROM memories m WHERE {clause} "
            "ORDER BY COALESCE(m.observed_at, m.created_at) DESC, m.rowid DESC LIMIT ?",
            [*params, limit],
        ).fetchall()
        return [record_from_row(values) for values in rows]

    def iter_namespace(self, conn: Connection, namespace: str | None) -> Iterable[MemoryRecord]:
        """Every memory of a namespace (or of the store), oldest first, streamed."""
        if namespace is None:
            cursor = conn.execute(f"SELECT {_SELECT} FROM memories ORDER BY rowid")
        else:
            cursor = conn.execute(
                f"SELECT {_SELECT} FROM memories WHERE namespace = ? ORDER BY rowid",
                (namespace,),
            )
        for values in cursor:
            yield record_from_row(values)

    def page(
        self, conn: Connection, namespace: str | None, after: int, limit: int
    ) -> builtins.list[tuple[int, MemoryRecord]]:
        """Up to ``limit`` (rowid, memory) of a namespace (or the store) above ``after``."""
        scope = "" if namespace is None else "namespace = ? AND "
        args: builtins.list[Any] = [] if namespace is None else [namespace]
        rows = conn.execute(
            f"SELECT rowid, {_SELECT} FROM memories WHERE {scope}rowid > ? ORDER BY rowid "
            "LIMIT ?", [*args, after, limit],
        ).fetchall()
        return [(int(values[0]), record_from_row(values[1:])) for values in rows]

    def keyword_search(
        self,
        conn: Connection,
        match: str,
        where: RowFilter,
        limit: int | None,
        weights: Sequence[float],
    ) -> builtins.list[tuple[int, float]]:
        """(rowid, score) best first; score = -bm25, higher is better. No row cap."""
        return self.keywords.search(conn, match, where, limit, weights)

    def namespace_counts(self, conn: Connection) -> dict[str, int]:
        return {
            str(ns): int(n)
            for ns, n in conn.execute(
                "SELECT namespace, count(*) FROM memories GROUP BY namespace ORDER BY namespace"
            )
        }
