"""The public surface and the import direction are decisions: a change here is deliberate."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import aide_memoire

from .import_graph import GRAPH, MODULES, cycles, package_edges

E = "aide_memoire.engine"


PUBLIC = [
    "AideMemoireError", "AsyncMemory", "AuditEvent", "AuditReport", "CodeHit",
    "CodeIndexReport", "ConsolidationReport", "DocLink", "DoctorReport", "Fact",
    "FeedbackResult", "ForeignDatabase", "ForgetReport", "Hit", "ImportReport",
    "InvalidContent", "InvalidInput", "InvalidNamespace", "InvalidQuery", "MaintenanceReport",
    "MaintenanceStatus", "Memory", "MemoryDetail", "MemoryRecord", "ModelUnavailable",
    "NewerSchema", "NotFound", "PartMissing", "ReembedReport", "RelatedResult",
    "RestoreReport", "RestoreResult", "ReviewDecision", "ReviewItem", "SecretRefused",
    "Settings", "SnapshotInfo", "Stage", "Status", "StoreError", "StoreFull", "SymbolHit",
    "WikiExportReport", "WikiLintReport", "WriteResult", "__version__",
]


def test_public_names() -> None:
    assert sorted(aide_memoire.__all__) == sorted(PUBLIC)
    for name in aide_memoire.__all__:
        assert hasattr(aide_memoire, name), name


# What a public method of Memory may return without the name being exported: the typing
# and standard names, and the two doors to the parts (documented as not a stable API).
_NOT_EXPORTED = {"AbstractContextManager", "Any", "Iterator", "None", "Internals",
                 "CodeIndex"}


def test_every_model_a_public_method_returns_is_exported() -> None:
    from aide_memoire.engine.facade.memory import Memory

    returned: set[str] = set()
    for name, member in vars(Memory).items():
        if name.startswith("_"):
            continue
        function = member.fget if isinstance(member, property) else getattr(
            member, "__func__", member)
        if callable(function):
            returned |= set(re.findall(r"\b[A-Z]\w+", str(
                function.__annotations__.get("return", ""))))
    assert sorted(returned - _NOT_EXPORTED - set(aide_memoire.__all__)) == []


# Memory shows its methods, not its parts: these went behind Memory.internals.
def test_memory_exposes_no_internals() -> None:
    from aide_memoire.engine.facade.memory import Memory

    parts = ("db", "store_", "context", "services", "embedder", "recaller", "mirror",
             "vector_tables")
    assert [name for name in parts if hasattr(Memory, name)] == []


# Edge modules that reach the engine's parts through Memory.internals, and why (only
# shrinks; a new entry is a decision: give the edge a public method instead).
INTERNALS_USERS = {
    "aide_memoire.cli.adopt": "moves an older namespace's rows (ops/adopt.py takes the db)",
    "aide_memoire.cli.serve": "reports the model's loading progress",
    "aide_memoire.hooks.capture": "reads the turn uuids already captured",
    "aide_memoire.hooks.service": "adopts an older namespace on first use",
    "aide_memoire.hooks.warm": "waits for the model the prompt hook needs",
    "aide_memoire.mcp.http": "says whether the model is still loading",
    "aide_memoire.mcp.run": "waits for the model before the warm-up recall",
    "aide_memoire.web.entities": "reads the entity graph in one read transaction",
    "aide_memoire.web.health": "reads counts in one read transaction",
    "aide_memoire.web.memories": "reads the listing in one read transaction",
    "aide_memoire.web.memory_page": "reads one memory's page in one read transaction",
    "aide_memoire.web.timeline": "reads the timeline in one read transaction",
}


def _internals_users() -> set[str]:
    found = set()
    for name, path in MODULES.items():
        if name.startswith(f"{E}.facade"):
            continue
        tree = ast.parse(Path(path).read_text())
        if any(isinstance(node, ast.Attribute) and node.attr == "internals"
               for node in ast.walk(tree)):
            found.add(name)
    return found


def test_only_the_named_edges_use_memory_internals() -> None:
    found = _internals_users()
    assert sorted(found - set(INTERNALS_USERS)) == [], "add a public method instead"
    assert sorted(set(INTERNALS_USERS) - found) == [], "remove these entries"


# The edges: they take a Memory; the engine never imports them.
EDGES = ("aide_memoire.cli", "aide_memoire.mcp", "aide_memoire.web", "aide_memoire.hooks",
         "aide_memoire.tools", "aide_memoire.refdocs")


def test_engine_imports_no_edge() -> None:
    found = sorted(
        f"{module} -> {other}" for module, others in GRAPH.items() if module.startswith(E)
        for other in others if other.startswith(EDGES)
    )
    assert found == []


# The layers (docs/architecture.md, "Layers") as a package graph: no package imports
# one that imports it back, directly or through others, with no exception listed.
def test_the_package_graph_is_acyclic() -> None:
    graph: dict[str, set[str]] = {}
    for importer, imported in package_edges(GRAPH):
        graph.setdefault(importer, set()).add(imported)
    assert cycles(graph) == []


def test_the_cycle_check_sees_a_back_edge() -> None:
    # What the ratchet guards against: storage importing a feature that imports storage.
    graph = {f"{E}.storage": {f"{E}.trust"}, f"{E}.trust": {f"{E}.storage"}}
    assert cycles(graph) == [[f"{E}.storage", f"{E}.trust"]]


# Modules of storage that import a layer above it, and why (only shrinks). The schema
# steps, the seal and the audit chain's format are storage's: it imports no feature.
STORAGE_UPWARD = {
    f"{E}.storage.postgres.keyword": "bm25 column weights are recall's (fusion.py)",
    f"{E}.storage.transfer.copy": "re-anchors and verifies a copied audit log (trust/)",
}


def _storage_upward() -> dict[str, list[str]]:
    below = (f"{E}.storage", f"{E}.core", "aide_memoire.logs")
    return {m: hits for m, hits in (
        (m, sorted(o for o in others if not o.startswith(below)))
        for m, others in GRAPH.items() if m.startswith(f"{E}.storage")) if hits}


def test_storage_imports_only_the_core_but_the_listed() -> None:
    found = _storage_upward()
    assert {m: h for m, h in found.items() if m not in STORAGE_UPWARD} == {}
    assert [m for m in STORAGE_UPWARD if m not in found] == [], "remove these entries"


def test_the_core_imports_nothing_else_of_the_engine() -> None:
    core = f"{E}.core"
    found = sorted(f"{m} -> {o}" for m, others in GRAPH.items() if m.startswith(core)
                   for o in others if o.startswith(E) and not o.startswith(core))
    assert found == []


def test_the_graph_walk_sees_relative_type_level_and_lazy_imports() -> None:
    # context.py imports the PostgreSQL parts inside a function, relatively.
    assert f"{E}.storage.postgres.parts" in GRAPH[f"{E}.runtime.context"]
    assert (f"{E}.facade", f"{E}.services") in package_edges(GRAPH)


# Modules outside engine/storage/ that import a backend's package, and why (only shrinks).
# What both backends run as written is in storage/portable/, which anyone may import.
BACKEND_IMPORTS = {
    f"{E}.runtime.context": "the composition root picks the backend's repositories",
    f"{E}.ops.adopt": "picks each backend's namespace move itself",
}


_BACKENDS = (f"{E}.storage.sqlite", f"{E}.storage.postgres")


def _importers_of(targets: tuple[str, ...], *, skip: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for module, others in GRAPH.items():
        if module.startswith(skip):
            continue
        hits = sorted(o for o in others if o.startswith(targets))
        if hits:
            found[module] = hits
    return found


def _backend_importers() -> dict[str, list[str]]:
    return _importers_of(_BACKENDS, skip=f"{E}.storage")


def test_only_storage_imports_a_backend_package() -> None:
    strays = {m: hits for m, hits in _backend_importers().items() if m not in BACKEND_IMPORTS}
    assert strays == {}, "go through the storage Protocols (engine/storage/protocol.py)"


def test_every_backend_import_exemption_is_still_needed() -> None:
    assert [m for m in BACKEND_IMPORTS if m not in _backend_importers()] == []


# PostgreSQL modules that still import SQLite's (only shrinks): the classes that inherit.
POSTGRES_ON_SQLITE = {
    # By design: PostgreSQL's keyword tokens are FTS5's own, from an in-memory SQLite.
    f"{E}.storage.postgres.keyword_tokens": "FTS5's tokenizer, so both backends' BM25 agree",
}


def test_postgres_imports_nothing_of_sqlite_but_the_listed() -> None:
    sqlite = (f"{E}.storage.sqlite", *_SQLITE[1:])
    found = _importers_of(sqlite, skip=f"{E}.storage.sqlite")
    on_sqlite = {m: hits for m, hits in found.items() if m.startswith(f"{E}.storage.postgres")}
    assert {m: h for m, h in on_sqlite.items() if m not in POSTGRES_ON_SQLITE} == {}
    assert [m for m in POSTGRES_ON_SQLITE if m not in on_sqlite] == [], "remove these entries"


# The SQLite side: its package and the SQLite-only modules beside it.
_SQLITE = (f"{E}.storage.sqlite", f"{E}.storage.db", f"{E}.storage.driver")
# PostgreSQL classes that derive from a SQLite one: none (what both run is portable/).
SQLITE_BASED: dict[str, str] = {}


def _postgres_classes_on_sqlite() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name in sorted(MODULES):
        if not name.startswith(f"{E}.storage.postgres"):
            continue
        for _, cls in inspect.getmembers(importlib.import_module(name), inspect.isclass):
            if cls.__module__ != name:
                continue
            bases = [f"{b.__module__}.{b.__qualname__}" for b in cls.__mro__[1:]
                     if b.__module__.startswith(_SQLITE)]
            if bases:
                found[f"{name}.{cls.__qualname__}"] = bases
    return found


def test_no_postgres_class_derives_from_a_sqlite_one() -> None:
    found = _postgres_classes_on_sqlite()
    assert {k: v for k, v in found.items() if k not in SQLITE_BASED} == {}
    assert [k for k in SQLITE_BASED if k not in found] == [], "remove these entries"
