"""What a store holds, read from its own catalogue, and how each table moves.

The copier never lists the tables it copies: it reads them from the source's catalogue
(``sqlite_master``, or ``pg_class`` in the store's schema) and sorts each into one of a
few ways of moving. Every plain table present on both sides with the same columns is
copied row by row; the few tables that are an index of other rows are rebuilt or moved
by their own path; a table the rules do not place (a virtual table of a future step, a
table the target lacks, columns that differ) is an error naming it, so no migration's
table can be dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...core.errors import StoreError
from ..protocol import Connection, Dialect
from ..sqlite_steps import CODE_TABLES

__all__ = [
    "KEYWORD_TABLE", "MEMORIES", "Plan", "Step", "Table", "plan", "read_catalogue", "row_filter",
]

How = Literal["copied", "rebuilt", "vectors", "registry", "skipped"]

MEMORIES = "memories"
KEYWORD_TABLE = "memory_fts"  # rebuilt on the target by its own keyword index
# Each backend's keyword index: SQLite's FTS5 table; PostgreSQL's postings (its schema step
# 11: FTS5's tokens in b-tree tables). Whichever the source has is rebuilt once on the
# target by the target's own index; the other tables of PostgreSQL's go with it.
_KEYWORD_DOCUMENTS = {KEYWORD_TABLE, "keyword_docs"}
_KEYWORD_PARTS = {"keyword_postings", "keyword_totals", "keyword_terms"}
_REGISTRY = "vector_spaces"  # written by the target's VectorIndex.ensure_space
_VERSIONS = "schema_migrations"  # compared before the copy, never copied
# Rows a store's own schema makes (PostgreSQL's step 1 marks the schema as ours): neither
# copied nor hashed, since both sides have their own.
_OWN_ROWS = {"meta": "key <> 'application'"}
_SKIPPED = {
    **{t: "the code index is derived from source files: index them again on the target"
       for t in CODE_TABLES},
    "maintenance_leases": "a running maintenance's lease belongs to its store",
    # SQLite's int8 copy of the vectors for the mirror's start-up (schema step 14): derived
    # from the vector tables, which move; a target without them rebuilds them itself.
    **{t: "the mirror's int8 blocks are derived from the vectors: the target rebuilds them"
       for t in ("vector_blocks", "vector_tombstones", "vector_block_state")},
    # The near-duplicate codes (step 16) name rows by rowid, which the copy renumbers: the
    # target codes its rows on its first checked write.
    **{t: "the near-duplicate codes are derived from the vectors: the target codes them"
       for t in ("near_codes", "near_code_slices")},
}
_SERVER_ONLY = {"namespace_roles": "row-level security: database roles exist on PostgreSQL only"}


@dataclass(frozen=True)
class Table:
    """One table as its store's catalogue describes it."""

    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]  # the primary key's columns, in order; () if it has none
    virtual: bool = False
    identity: tuple[str, ...] = ()  # columns whose values the server generates


@dataclass(frozen=True)
class Step:
    """How one source table moves, and the columns both sides share."""

    table: str
    how: How
    columns: tuple[str, ...] = ()
    key: tuple[str, ...] = ()
    why: str = ""


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]

    def of(self, how: How) -> list[Step]:
        return [s for s in self.steps if s.how == how]


def row_filter(table: str) -> str:
    """The WHERE clause selecting the rows that move (all of them but a schema's own)."""
    return _OWN_ROWS.get(table, "TRUE")


def read_catalogue(conn: Connection, dialect: Dialect) -> dict[str, Table]:
    return _sqlite_catalogue(conn) if dialect == "sqlite" else _postgres_catalogue(conn)


def _sqlite_catalogue(conn: Connection) -> dict[str, Table]:
    found: dict[str, Table] = {}
    rows = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    virtual = {str(n) for n, sql in rows if str(sql or "").upper().startswith("CREATE VIRTUAL")}
    for name, _ in rows:
        name = str(name)
        if any(name.startswith(f"{v}_") for v in virtual if v != name):
            continue  # a virtual table's own storage: it moves (or not) with that table
        info = conn.execute("SELECT name, pk FROM pragma_table_info(?) ORDER BY cid",
                            (name,)).fetchall()
        key = tuple(str(n) for n, pk in sorted(info, key=lambda r: int(r[1])) if int(pk))
        found[name] = Table(name, tuple(str(n) for n, _ in info), key, name in virtual)
    return found


def _postgres_catalogue(conn: Connection) -> dict[str, Table]:
    found: dict[str, Table] = {}
    names = conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') "
        "AND NOT c.relispartition"  # a vector table's partitions move with it
    ).fetchall()
    for (name,) in names:
        name = str(name)
        columns = conn.execute(
            "SELECT attname, attidentity FROM pg_attribute WHERE attrelid = to_regclass(?) "
            "AND attnum > 0 AND NOT attisdropped ORDER BY attnum", (name,)).fetchall()
        key = conn.execute(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
            "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = to_regclass(?) AND i.indisprimary "
            "ORDER BY array_position(i.indkey::int2[], a.attnum)", (name,)).fetchall()
        found[name] = Table(
            name, tuple(str(c) for c, _ in columns), tuple(str(k) for (k,) in key),
            identity=tuple(str(c) for c, ident in columns if ident),
        )
    return found


def plan(source: dict[str, Table], target: dict[str, Table], vector_tables: set[str]) -> Plan:
    """How each source table moves to ``target``; StoreError naming any that cannot."""
    steps: list[Step] = []
    problems: list[str] = []
    for name in sorted(source, key=lambda n: (n != MEMORIES, n)):  # memories first: keys
        table = source[name]
        if name == _VERSIONS:
            continue
        if name in _KEYWORD_DOCUMENTS:
            steps.append(Step(KEYWORD_TABLE, "rebuilt", why="by the target's keyword index"))
        elif name in _KEYWORD_PARTS:
            steps.append(Step(name, "skipped",
                              why="part of PostgreSQL's keyword index: rebuilt with it"))
        elif name in vector_tables:
            steps.append(Step(name, "vectors", ("rowid", "namespace", "embedding"), ("rowid",)))
        elif name in _SKIPPED or (name in _SERVER_ONLY and name not in target):
            steps.append(Step(name, "skipped", why={**_SKIPPED, **_SERVER_ONLY}[name]))
        elif table.virtual:
            problems.append(f"{name} (a virtual table this copier does not know)")
        elif name not in target:
            problems.append(f"{name} (the target has no such table)")
        elif set(table.columns) != set(target[name].columns):
            differ = sorted(set(table.columns) ^ set(target[name].columns))
            problems.append(f"{name} (columns differ: {', '.join(differ)})")
        else:
            how: How = "registry" if name == _REGISTRY else "copied"
            key = table.key or target[name].key
            steps.append(Step(name, how, tuple(sorted(table.columns)), key))
    if problems:
        raise StoreError(
            "the store cannot be copied: the copier does not know how to move "
            + "; ".join(problems) + ". Nothing was written; this aide-memoire's copier "
            "needs to learn these tables first"
        )
    return Plan(tuple(steps))
