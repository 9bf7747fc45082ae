"""The data-access layer's rules, checked on the source (docs/architecture.md, "Data access").

Features talk to repositories, never to tables: SQL on the memories, keyword, vector and
trust tables lives in engine/storage/, and SQL only SQLite speaks (FTS5, vec0, PRAGMA,
JSON functions, OR IGNORE, rowid ...) lives there too, or in a module allow-listed
below with its reason. A connection or transaction is typed ``Connection``, never
``Any``. A new feature module that breaks a rule fails here, and so does an allow-list
entry whose module no longer needs it (the list only shrinks).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from aide_memoire.engine.storage.db import SqliteDatabase
from aide_memoire.engine.storage.repositories import (
    KeywordIndex,
    MemoryLinks,
    MemoryRows,
    VectorIndex,
)
from aide_memoire.engine.storage.sqlite import sqlite_repositories
from aide_memoire.engine.storage.sqlite.vectors import SqliteVectorIndex

PACKAGE = Path(__file__).resolve().parents[3] / "server" / "aide_memoire"

# Tables that only their repositories may name in SQL.
OWNED_TABLES = (
    "memories", "memory_fts", "vector_spaces", "vector_state", "audit_events", "audit_head",
    "review_items", "memory_findings", "namespace_sizes", "vector_blocks", "vector_tombstones",
    "vector_block_state",
)
_TABLE_SQL = re.compile(
    r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE|EXISTS)\s+(?:OR\s+\w+\s+)?(?P<table>"
    + "|".join(OWNED_TABLES) + r"|memory_vec_\w+)\b"
)
# SQL that only SQLite runs (each a construct a PostgreSQL backend writes differently).
_DIALECT_SQL = {
    "FTS5 MATCH": re.compile(r"\bMATCH\s+\?"),
    "bm25()": re.compile(r"\bbm25\("),
    "vec0": re.compile(r"\bvec0\b"),
    "PRAGMA": re.compile(r"\bPRAGMA\b"),
    "sqlite_master": re.compile(r"\bsqlite_master\b"),
    "json_each/json_extract": re.compile(r"\bjson_(?:each|extract)\("),
    "OR IGNORE/REPLACE": re.compile(r"\b(?:INSERT|UPDATE)\s+OR\s+(?:IGNORE|REPLACE)\b"),
    "rowid": re.compile(r"(?:\browid\b.*\b(?:SELECT|FROM|WHERE|INSERT|DELETE)\b|"
                        r"\b(?:SELECT|FROM|WHERE|INSERT|DELETE)\b.*\browid\b)", re.S),
    "datetime()": re.compile(r"\bdatetime\("),
    "group_concat()": re.compile(r"\bgroup_concat\("),
    "instr()": re.compile(r"\binstr\("),
}

# Modules outside engine/storage/ (the edges too) that may keep such SQL, and why. Keep
# reasons true: the test fails when a listed module no longer has any. (Empty: the
# mirror's reads, the last entry, are VectorIndex methods now.)
ALLOWED: dict[str, str] = {}


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if not name.startswith("engine/storage/"):
            yield name, path


def _strings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every string literal but docstrings, an f-string's parts joined by a placeholder."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            inside.add(id(node.value))  # a docstring (or a bare string): prose, not SQL
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str)
                           else "{}" for v in node.values)
            inside.update(id(v) for v in node.values)
            yield node.lineno, text
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in inside:
            yield node.lineno, node.value


def _is_sql(text: str) -> bool:
    return bool(re.search(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|PRAGMA|DROP)\b", text))


def violations(source: str) -> list[str]:
    """What a module's SQL does that only a repository may: 'line: problem'."""
    found = []
    for line, text in _strings(ast.parse(source)):
        if not _is_sql(text):
            continue
        table = _TABLE_SQL.search(text)
        if table:
            found.append(f"{line}: SQL on {table.group('table')}")
        found.extend(f"{line}: {label}" for label, rule in _DIALECT_SQL.items()
                     if rule.search(text))
    return found


def _offenders(
    check: Callable[[str], list[str]],
    exempt: Mapping[str, str],
) -> dict[str, list[str]]:
    """What ``check`` finds in each module outside engine/storage/ and ``exempt``."""
    found = {name: check(path.read_text(encoding="utf-8"))
             for name, path in _modules() if name not in exempt}
    return {name: problems for name, problems in found.items() if problems}


def test_feature_modules_leave_owned_tables_and_sqlite_sql_to_the_repositories() -> None:
    offenders = _offenders(violations, ALLOWED)
    assert not offenders, (
        "move this SQL into a repository under engine/storage/ (or allow-list the module "
        f"with its reason): {offenders}"
    )


def test_every_allow_listed_module_still_needs_its_entry() -> None:
    names = dict(_modules())
    stale = [name for name in ALLOWED
             if name not in names or not violations(names[name].read_text(encoding="utf-8"))]
    assert not stale, f"these modules no longer need the allow-list; remove them: {stale}"


@pytest.mark.parametrize("sql, rule", [
    ("SELECT id FROM memories WHERE namespace = ?", "SQL on memories"),
    ("DELETE FROM memory_fts WHERE rowid = ?", "SQL on memory_fts"),
    ("UPDATE review_items SET status = 'expired'", "SQL on review_items"),
    ("SELECT rowid FROM x WHERE memory_fts MATCH ?", "FTS5 MATCH"),
    ("INSERT OR IGNORE INTO entity_edges (a) VALUES (?)", "OR IGNORE/REPLACE"),
    ("SELECT value FROM json_each(?)", "json_each/json_extract"),
    ("PRAGMA user_version", "PRAGMA"),
    ("SELECT group_concat(name) FROM entities", "group_concat()"),
])
def test_the_scanner_catches_each_rule(sql: str, rule: str) -> None:
    source = f"def f(conn):\n    conn.execute({sql!r})\n"
    assert any(rule in problem for problem in violations(source))
    fstring = f"def f(conn, t):\n    conn.execute(f{(sql + ' {t}')!r})\n"
    assert any(rule in problem for problem in violations(fstring))


def test_the_scanner_leaves_portable_sql_on_other_tables_alone() -> None:
    source = (
        "def f(conn):\n"
        "    conn.execute('SELECT holder FROM maintenance_leases WHERE namespace = ?')\n"
        "    conn.execute('INSERT INTO facts (a) VALUES (?) ON CONFLICT (a) DO NOTHING')\n"
        "    rowid = 3\n"
        "    return 'the memories we keep', rowid\n"
    )
    assert violations(source) == []


_PERF = "perf engineer's module this round; typed when it merges"
# Modules whose connections may stay ``Any``, and why (the list only shrinks, as above).
_UNTYPED_OK = {
    "engine/runtime/pipeline.py": _PERF, "engine/recall/recaller.py": _PERF,
    "engine/recall/calibrate.py": _PERF,
}


def _untyped_connections(source: str) -> list[str]:
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            out.extend(
                f"{node.lineno}: {node.name}({arg.arg})" for arg in args
                if arg.arg in {"conn", "tx"} and (
                    arg.annotation is None or ast.unparse(arg.annotation) == "Any")
            )
    return out


def test_connections_are_typed_connection_not_any() -> None:
    assert not _untyped_connections("from x import Connection\ndef f(conn: Connection): ...")
    assert _untyped_connections("def f(tx: Any, conn): ...") == ["1: f(tx)", "1: f(conn)"]
    offenders = _offenders(_untyped_connections, _UNTYPED_OK)
    assert not offenders, f"type these connections as storage.protocol.Connection: {offenders}"


def test_every_untyped_exemption_still_needs_its_entry() -> None:
    names = dict(_modules())
    stale = [name for name in _UNTYPED_OK if name not in names
             or not _untyped_connections(names[name].read_text(encoding="utf-8"))]
    assert not stale, f"these modules type their connections now; remove them: {stale}"


def test_the_sqlite_repositories_implement_the_protocols(tmp_path: Path) -> None:
    """At run time too (mypy checks the signatures): the backend a feature is handed
    has every method, and answers through a real store."""
    db = SqliteDatabase(tmp_path / "memory.db")
    try:
        vectors = SqliteVectorIndex(vec_available=db.vec_version is not None)
        repos = sqlite_repositories(vectors)
        assert repos.dialect == db.dialect == "sqlite"
        assert isinstance(repos.rows, MemoryRows)
        assert isinstance(repos.keywords, KeywordIndex)
        assert isinstance(repos.vectors, VectorIndex)
        assert isinstance(repos.links, MemoryLinks)
        from aide_memoire.engine.storage.rows import NewRow, RowFilter

        with db.write() as tx:
            rowid, memory_id = repos.rows.insert(tx, NewRow(namespace="n", kind="note",
                                                            content="the lighthouse keeper"))
        with db.read() as conn:
            assert repos.rows.get(conn, memory_id, "n") is not None
            assert repos.keywords.document_counts(conn, ["lighthouse", "harbour"], 5) == {
                "lighthouse": 1, "harbour": 0}
            hits = repos.keywords.search(conn, "lighthouse", RowFilter(namespaces=["n"]), 10,
                                         [1.0] * 7)
            assert [r for r, _ in hits] == [rowid]
            assert repos.rows.count_in(conn, ["n", "other"]) == 1
    finally:
        db.close()
