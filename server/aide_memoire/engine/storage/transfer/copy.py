"""Copying a whole store to another backend, verified table by table before it commits.

The order, all inside one write transaction of the target (any failure or mismatch
rolls it back and leaves the target as empty as it was):

1. refuse a target that holds any row the copy would write (never a silent merge);
2. copy every plain table (memories first: the other tables' keys point at them),
   hashing the source rows as they stream past; set the server's identity sequences
   past the copied keys;
3. register each embedding space through the target's own vector index, then copy its
   vectors (the same float32 values);
4. rebuild the keyword index with the target's own ``KeywordIndex.add`` (an FTS5
   document and a tsvector are not the same bytes; the words are the same);
5. hash every table again on the target and compare count and hash; check the audit
   chain on the target as ``audit verify`` does.

After the commit the target's audit anchor is set to the copied head (beside a SQLite
file; in the data home for a server store), so ``audit verify`` there holds.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ...core.errors import InvalidInput, StoreError
from ...core.space import EmbeddingSpace
from ...trust import audit
from ...trust.anchor import Anchor
from ..driver import Driver
from ..migrations import SCHEMA_VERSION
from ..protocol import Connection
from .catalogue import KEYWORD_TABLE, MEMORIES, Plan, Step, plan, read_catalogue, row_filter
from .digest import TableDigest
from .endpoints import Source, Target, is_url, open_source, open_target, quote, stream, write_rows
from .models import TableResult, TransferReport

__all__ = ["Progress", "migrate_store"]

# (what is being done, rows done, rows in all): the CLI draws it as a bar.
Progress = Callable[[str, int, int], None]


class _Mismatch(Exception):
    """Raised inside the target's transaction to roll it back; carries the report."""

    def __init__(self, report: TransferReport) -> None:
        super().__init__(report.problem)
        self.report = report


def _quiet(_what: str, _done: int, _total: int) -> None:
    return None


def migrate_store(source_spec: str, target_spec: str, *, driver: Driver,
                  home: Path | None = None, progress: Progress = _quiet) -> TransferReport:
    """Copy the store at ``source_spec`` into the empty store at ``target_spec`` (each a
    SQLite path or a postgresql:// URL). ``home``: the data home whose audit anchor
    names a server target. A mismatch is reported (``ok`` False), never committed."""
    if source_spec == target_spec or (
            not is_url(source_spec) and not is_url(target_spec)
            and Path(source_spec).expanduser().resolve()
            == Path(target_spec).expanduser().resolve()):
        raise InvalidInput("--from and --to name the same store; copy into another one")
    with open_source(source_spec, driver) as source:
        source_tables = read_catalogue(source.conn, source.dialect)
        spaces = _spaces(source.conn) if "vector_spaces" in source_tables else []
        with open_target(target_spec, driver) as target:
            if target.db.schema_version() != SCHEMA_VERSION:  # pragma: no cover - opening migrates
                raise StoreError(f"{target.where} is not at schema {SCHEMA_VERSION}")
            try:
                with target.db.write() as tx, _unpipelined(tx):
                    steps = plan(source_tables, read_catalogue(tx, target.dialect),
                                 {t for *_, t, _ in spaces})
                    _refuse_nonempty(tx, target, steps)
                    report = _Copy(source, target, tx, progress).run(steps, spaces)
                    if not report.ok:
                        raise _Mismatch(report)
            except _Mismatch as failed:
                return failed.report.model_copy(update={"committed": False})
            target.committed = True
            _anchor(target, home)
            return report


def _unpipelined(tx: Connection) -> contextlib.AbstractContextManager[object]:
    """The copy's transaction out of PostgreSQL's pipeline mode: COPY and the server-side
    cursors that read the copied rows back are not allowed in a pipeline."""
    from ..postgres.connection import PgConnection

    return tx.outside_pipeline() if isinstance(tx, PgConnection) else contextlib.nullcontext()


def _spaces(conn: Connection) -> list[tuple[str, str, int, str, str]]:
    return [(str(k), str(m), int(d), str(t), str(c)) for k, m, d, t, c in conn.execute(
        "SELECT key, model, dim, table_name, created_at FROM vector_spaces")]


def _count(conn: Connection, table: str) -> int:
    return int(conn.execute(
        f"SELECT count(*) FROM {quote(table)} WHERE {row_filter(table)}").fetchone()[0])


def _refuse_nonempty(tx: Connection, target: Target, steps: Plan) -> None:
    present = set(read_catalogue(tx, target.dialect))
    held = {s.table: n for s in steps.steps if s.how in ("copied", "registry", "vectors")
            and s.table in present and (n := _count(tx, s.table))}
    if held:
        listed = ", ".join(f"{n} in {t}" for t, n in sorted(held.items(), key=lambda i: (
            i[0] != MEMORIES, i[0])))
        raise StoreError(
            f"{target.where} is not empty (rows: {listed}); migrate-store copies only into "
            "an empty store and never merges two. Name a new file or an empty database"
        )


def _anchor(target: Target, home: Path | None) -> None:
    """The copied chain's head becomes the target's anchor (see trust/anchor.py)."""
    if target.path is not None:
        path = target.path
    elif home is not None:
        from ..postgres.engine_db import POINTER_FILENAME

        path = home / POINTER_FILENAME
    else:
        return
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    conn: Connection = target.db.conn()
    Anchor(path).reset(conn)


class _Copy:
    def __init__(self, source: Source, target: Target, tx: Connection,
                 progress: Progress) -> None:
        self.source, self.target, self.tx, self.progress = source, target, tx, progress
        self.written = 0

    def run(self, steps: Plan, spaces: list[tuple[str, str, int, str, str]]) -> TransferReport:
        started = time.perf_counter()
        results: list[TableResult] = []
        for step in steps.of("copied"):
            results.append(self._copy_table(step))
        for step in steps.of("registry"):
            results.append(self._registry(step, spaces))
        for step in steps.of("vectors"):
            results.append(self._vectors(step))
        results.extend(self._keywords(step) for step in steps.of("rebuilt"))
        results.extend(TableResult(table=s.table, how="skipped", ok=True, note=s.why,
                                   rows=_count(self.source.conn, s.table))
                       for s in steps.of("skipped"))
        if self.target.dialect == "postgres":
            for result in results:
                # plans for the new rows; PostgreSQL's keyword index is its step-11 tables
                tables = (("keyword_docs", "keyword_postings", "keyword_terms")
                          if result.how == "rebuilt"
                          else () if result.how == "skipped" else (result.table,))
                for table in tables:
                    self.tx.execute(f"ANALYZE {quote(table)}")
        # With every table's hash equal, the chain verifies on the target exactly as it
        # does on the source (a broken chain is copied as it is, and reported so).
        target_audit = audit.verify(self.tx)
        # A SQLite store seals its memories' audited fields (trust/seal.py); rows from a
        # store that does not get theirs now, in one event after the copy.
        if (self.target.dialect == "sqlite" and target_audit.intact
                and audit.seal_unsealed(self.tx, actor="migrate-store")):
            target_audit = audit.verify(self.tx)
        problem = next((f"{r.table}: {r.note}" for r in results if not r.ok), None)
        seconds = time.perf_counter() - started
        return TransferReport(
            source=self.source.where, target=self.target.where, schema_version=SCHEMA_VERSION,
            ok=problem is None, committed=problem is None, tables=results,
            audit_events=target_audit.events, audit_intact=target_audit.intact,
            audit_problem=target_audit.problem, rows=self.written, seconds=round(seconds, 3),
            rows_per_second=round(self.written / seconds, 1) if seconds else 0.0,
            problem=problem,
        )

    # -- reading and checking ------------------------------------------------------------

    def _select(self, step: Step) -> str:
        names = ", ".join(quote(c) for c in step.columns)
        return f"SELECT {names} FROM {quote(step.table)} WHERE {row_filter(step.table)}"

    def _digest(self, step: Step) -> TableDigest:
        return TableDigest(tuple(step.columns.index(k) for k in step.key))

    def _hashed(self, step: Step, digest: TableDigest) -> Iterator[tuple[Any, ...]]:
        for row in stream(self.source.conn, self.source.dialect, self._select(step)):
            digest.add(row)
            yield row

    def _checked(self, step: Step, source: TableDigest, how: str, note: str = "") -> TableResult:
        mine = self._digest(step)
        what = f"{step.table} (verify)"
        for row in stream(self.tx, self.target.dialect, self._select(step)):
            mine.add(row)
            if mine.rows % 1000 == 0:
                self.progress(what, mine.rows, source.rows)
        ok = (source.rows, source.hexdigest()) == (mine.rows, mine.hexdigest())
        if not ok:
            note = (f"{source.rows} rows in the source, {mine.rows} on the target"
                    if source.rows != mine.rows else "the same rows count, different content")
        return TableResult(table=step.table, how=how, rows=source.rows, target_rows=mine.rows,
                           source_hash=source.hexdigest(), target_hash=mine.hexdigest(),
                           ok=ok, note=note)

    def _tick(self, what: str, counts: Iterable[int], total: int) -> int:
        done = 0
        for done in counts:
            self.progress(what, done, total)
        return done

    # -- the steps -----------------------------------------------------------------------

    def _copy_table(self, step: Step) -> TableResult:
        total = _count(self.source.conn, step.table)
        digest = self._digest(step)
        self.progress(step.table, 0, total)
        rows = self._hashed(step, digest)
        self.written += self._tick(step.table, write_rows(
            self.tx, self.target.dialect, step.table, step.columns, rows), total)
        if self.target.dialect == "postgres":
            self._advance_identity(step.table)
        return self._checked(step, digest, "copied")

    def _advance_identity(self, table: str) -> None:
        """COPY took the keys as given: the server's next key must come after them."""
        for (column,) in self.tx.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(?) "
                "AND attidentity <> ''", (table,)).fetchall():
            self.tx.execute(
                f"SELECT setval(pg_get_serial_sequence(?, ?), coalesce((SELECT max("
                f"{quote(str(column))}) FROM {quote(table)}), 0) + 1, false)",
                (table, str(column)))

    def _registry(self, step: Step, spaces: list[tuple[str, str, int, str, str]]) -> TableResult:
        """Each space made by the target's own vector index (its table, partitions and
        index are the backend's), under the source's key, table name and date."""
        digest = self._digest(step)
        for row in stream(self.source.conn, self.source.dialect, self._select(step)):
            digest.add(row)
        for key, model, dim, table, created in spaces:
            space = EmbeddingSpace(model=model, dim=dim)
            made = self.target.rows.vectors.ensure_space(self.tx, space, created)
            if (space.key, made) != (key, table):
                raise StoreError(f"embedding space {key} ({model}, {dim}) would become "
                                 f"{space.key} in {made} on the target; nothing was written")
        return self._checked(step, digest, "registry")

    def _vectors(self, step: Step) -> TableResult:
        total = _count(self.source.conn, step.table)
        digest = self._digest(step)
        rows = self._hashed(step, digest)
        if self.target.dialect == "postgres":
            counts: Iterable[int] = self._pg_vectors(step.table, rows)
        else:
            counts = write_rows(self.tx, "sqlite", step.table, step.columns, rows)
        self.written += self._tick(step.table, counts, total)
        return self._checked(step, digest, "vectors")

    def _pg_vectors(self, table: str, rows: Iterator[tuple[Any, ...]]) -> Iterator[int]:
        from ..postgres.connection import PgConnection
        from .pg_vectors import load_vectors

        assert isinstance(self.tx, PgConnection)
        firsts = [(int(r), str(ns), bytes(b)) for r, ns, b in self.source.conn.execute(
            f"SELECT rowid, namespace, embedding FROM {quote(table)} WHERE rowid IN "
            f"(SELECT min(rowid) FROM {quote(table)} GROUP BY namespace)")]
        return load_vectors(self.tx, table, firsts, rows)

    def _keywords(self, step: Step) -> TableResult:
        """Every memory's document written by the target's keyword index, turns with their
        neighbours, as the write path and ``doctor`` make them."""
        memories = self.target.rows.index_all(
            self.tx, progress=lambda done, total: self.progress(KEYWORD_TABLE, done, total))
        documents = self._documents()
        ok = documents == memories
        return TableResult(
            table=step.table, how="rebuilt", rows=memories, target_rows=documents, ok=ok,
            note="one document per memory, by the target's keyword index" if ok else
            f"{documents} keyword documents for {memories} memories")

    def _documents(self) -> int:
        # FTS5's contentless table counts its documents in its docsize shadow table;
        # PostgreSQL's index has one row a document in keyword_docs (its step 11).
        table = "memory_fts_docsize" if self.target.dialect == "sqlite" else "keyword_docs"
        return int(self.tx.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
