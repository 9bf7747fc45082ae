"""The engine's shape: Memory a facade over services built from one context.

Pinned here because each of these grew back once before: mixins reaching into each
other's state, lifecycle's runner typed as the whole Memory (an import cycle), and
start-up that worked in one order only.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import AsyncMemory, Memory, Settings
from aide_memoire.engine.runtime.context import START_ORDER, ProposalRegistry
from aide_memoire.engine.services import SERVICE_ORDER

from ..import_graph import GRAPH as PACKAGE_GRAPH
from ..import_graph import MODULES as PACKAGE_MODULES
from ..import_graph import PACKAGE, cycles

ENGINE = PACKAGE / "engine"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
# Clients of the facade that live in the engine: the async twin (generated, and its
# hand-written base). (The plugin's hooks take a Memory as the CLI and MCP server do;
# they are an edge now, outside the engine.)
FACADE_CLIENTS = {"aide_memoire.engine.facade.async_memory",
                  "aide_memoire.engine.facade.async_base"}
MODULES = {name: path for name, path in PACKAGE_MODULES.items()
           if name.startswith("aide_memoire.engine")}
GRAPH = {name: PACKAGE_GRAPH[name] & MODULES.keys() for name in MODULES}


def test_the_cycle_finder_sees_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_between_engine_modules_even_at_type_level() -> None:
    assert cycles(GRAPH) == []


def test_memory_is_a_facade_not_a_sum_of_mixins() -> None:
    assert Memory.__bases__ == (object,)


def test_only_the_facade_and_its_clients_import_memory_py() -> None:
    memory = "aide_memoire.engine.facade.memory"
    importers = {name for name, found in GRAPH.items() if memory in found}
    assert importers - FACADE_CLIENTS == set()
    assert "aide_memoire.engine.facade.async_memory" in importers  # the walk does see imports


def test_services_sit_on_top_only_the_facade_imports_them() -> None:
    services = {n for n in MODULES if n.startswith("aide_memoire.engine.services")}
    users = {name for name, found in GRAPH.items() if found & services} - services
    # internals.py names the services' type only (Memory.internals hands them out).
    assert users == {"aide_memoire.engine.facade.memory", "aide_memoire.engine.facade.internals"}


def _annotated_names(tree: ast.AST) -> Iterator[tuple[str, ast.expr | None, int]]:
    """Every parameter and annotated assignment: (name, annotation, line)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            yield node.arg, node.annotation, node.lineno
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, node.annotation, node.lineno
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Attribute):
            yield node.target.attr, node.annotation, node.lineno


def test_nothing_takes_the_context_or_a_host_as_any() -> None:
    # Parameters and attributes, read from the syntax tree (a "host" in a URL's text,
    # as the PostgreSQL messages have, is not a parameter).
    found = [
        f"{path.relative_to(ENGINE)}:{line}"
        for path in ENGINE.rglob("*.py")
        for name, annotation, line in _annotated_names(ast.parse(path.read_text()))
        if name == "host"
        or (name in {"ctx", "context", "memory"}
            and isinstance(annotation, ast.Name) and annotation.id == "Any")
    ]
    assert found == []


def _public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, callable)
        if not name.startswith("_") and not isinstance(inspect.getattr_static(cls, name), type)
    }


def test_async_memory_is_generated_from_memory() -> None:
    from aide_memoire.engine.facade import async_codegen

    written = Path(async_codegen.__file__).with_name("async_memory.py").read_text()
    assert written == async_codegen.render(), (
        "async_memory.py is stale: run python -m aide_memoire.engine.facade.async_codegen "
        "> server/aide_memoire/engine/facade/async_memory.py")


def test_every_public_memory_method_has_an_async_twin_with_the_same_parameters() -> None:
    twins = _public_methods(AsyncMemory)
    methods = _public_methods(Memory)
    assert len(methods) > 40
    for name, signature in methods.items():
        twin = "aclose" if name == "close" else name
        assert twin in twins, f"AsyncMemory has no {twin}"
        assert list(twins[twin].parameters.values()) == list(signature.parameters.values()), name
        if name not in ("acting_as",):  # a plain context manager: it sets the task's actor
            assert inspect.iscoroutinefunction(getattr(AsyncMemory, twin)), name
    for name, member in vars(AsyncMemory).items():
        if isinstance(member, staticmethod) or not callable(member) or name.startswith("_"):
            continue
        for p in inspect.signature(member).parameters.values():
            # **kwargs only when typed by name: Unpack of a TypedDict made from the one
            # declaration of a memory's fields (engine/core/fields.py).
            if p.kind is inspect.Parameter.VAR_KEYWORD:
                assert str(p.annotation).startswith("Unpack["), f"{name} takes **kwargs"


def test_async_memory_runs_calls_under_the_actor_of_the_task(tmp_path: Path) -> None:
    async def main() -> tuple[str, list[str]]:
        settings = Settings(home=tmp_path, embedding_model="none")
        async with AsyncMemory(settings=settings) as memory:
            with memory.acting_as("agent-7"):
                memory_id = await memory.store("The build runs on Fridays", namespace="p")
            updated = await memory.update(memory_id, namespace="p", tags=["ci"])
            assert updated.tags == ["ci"]
            lines = await memory.export_lines("p", reveal_pii=False, with_vectors=False)
            history = await memory.audit_history(memory_id)
            return lines[1], [event.actor for event in history]

    line, actors = asyncio.run(main())
    assert "The build runs on Fridays" in line
    assert actors[0] == "agent-7" and actors[-1] == "python"


def test_memory_has_no_public_mutable_attributes(tmp_path: Path) -> None:
    with Memory(settings=Settings(home=tmp_path, embedding_model="none")) as memory:
        assert {n for n in vars(memory) if not n.startswith("_")} == set()
        for name in ("settings", "internals"):  # read-only properties
            with pytest.raises(AttributeError):
                setattr(memory, name, None)
        with pytest.raises(AttributeError):
            memory.internals.context.db = None  # type: ignore[misc, assignment]  # the context is frozen


def test_a_memory_opens_and_closes_twice_in_one_process(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, embedding_model="none", auto_maintenance=True)
    threads = []
    for round_ in (1, 2):
        memory = Memory(settings=settings)
        background = memory.internals.services.lifecycle.background
        assert background is not None and background.alive
        threads.append(background)
        memory.store(f"note of round {round_}", namespace="p")
        assert [r.content for r in memory.search(namespace="p")][0] == f"note of round {round_}"
        memory.close()
        memory.close()  # a second close does nothing
        assert memory.internals.db.closed and not background.alive
    assert threads[0] is not threads[1]
    with Memory(settings=settings.model_copy(update={"auto_maintenance": False})) as memory:
        assert len(memory.search(namespace="p")) == 2
        assert memory.audit_verify().intact


def test_services_start_in_the_documented_order(tmp_path: Path) -> None:
    on = Settings(home=tmp_path, embedding_model="none", entity_bridges=True)
    with Memory(settings=on) as memory:
        ctx = memory.internals.context
        # Lifecycle starts before facts: its hook and its adjuster run first.
        assert ctx.pipeline.hook_names() == ("near_duplicates", "facts")
        assert ctx.recaller.adjuster_names() == ("lifecycle", "supersession", "entity_bridges")
        assert ctx.proposals.kinds() == (
            "merge", "consolidate", "demote", "fact_conflict", "fact_update"
        )
        assert list(vars(memory.internals.services)) == list(SERVICE_ORDER)
    off = Settings(home=tmp_path, embedding_model="none", extract_facts=False,
                   lifecycle_scoring=False, entity_bridges=False)
    with Memory(settings=off) as memory:
        assert memory.internals.context.pipeline.hook_names() == ("near_duplicates",)
        assert memory.internals.context.recaller.adjuster_names() == ("supersession",)


def test_the_documented_order_is_the_order_in_the_code() -> None:
    section = DOCS.read_text().split("## Start-up and the services", 1)[1].split("\n## ")[0]
    parts, services = section.split("`start_services(ctx)`", 1)
    for order, text in ((START_ORDER, parts), (SERVICE_ORDER, services)):
        places = [text.find(f"`{name}`") for name in order]
        assert -1 not in places, [n for n, p in zip(order, places, strict=True) if p == -1]
        assert places == sorted(places), order


def test_a_proposal_kind_is_registered_once() -> None:
    registry = ProposalRegistry()

    def noop(*_: object) -> None:
        return None

    registry.register("merge", approve=noop, reject=noop)
    with pytest.raises(ValueError, match="registered already"):
        registry.register("merge", approve=noop, reject=noop)
    with pytest.raises(ValueError, match="quarantine"):
        registry.register("quarantine", approve=noop, reject=noop)
