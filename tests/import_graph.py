"""The package's import graph, read from the syntax tree: the ratchets' one source.

Every import counts, TYPE_CHECKING blocks and function bodies too: a type-level or lazy
import is still a dependency a reader must follow. Relative imports are resolved against
the importing module, and ``from pkg import name`` is an import of ``pkg.name`` when that
is a module.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = [
    "GRAPH", "MODULES", "PACKAGE", "TOP", "cycles", "imports_of", "module_name",
    "package_edges", "unit",
]

TOP = Path(__file__).resolve().parents[1] / "server"
PACKAGE = TOP / "aide_memoire"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(TOP).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path) -> set[str]:
    """The package's modules that ``path`` imports."""
    me = module_name(path)
    base = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            prefix = base[: len(base) - (node.level - 1)] if node.level else []
            module = ".".join([*prefix, *([node.module] if node.module else [])])
            names = {f"{module}.{a.name}" for a in node.names} & MODULES.keys()
            found |= names or ({module} & MODULES.keys())
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names} & MODULES.keys()
    return found - {me}


GRAPH = {name: imports_of(path) for name, path in MODULES.items()}


def unit(module: str) -> str:
    """The package a module belongs to; a module directly under aide_memoire is its own."""
    if MODULES[module].name == "__init__.py" or module.count(".") == 1:
        return module
    return module.rsplit(".", 1)[0]


def package_edges(graph: Mapping[str, Iterable[str]]) -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> the module imports that make the edge."""
    edges: dict[tuple[str, str], list[str]] = {}
    for module, found in graph.items():
        for other in sorted(found):
            if unit(module) != unit(other):
                edges.setdefault((unit(module), unit(other)), []).append(f"{module} -> {other}")
    return edges


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Strongly connected parts of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found
