"""Package names that load on first use (PEP 562), for the package ``__init__``s that a
short process (the prompt hook) must be able to pass through without their imports."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, namespace: dict[str, Any],
               where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``where`` maps each public name to the
    submodule (relative, without the dot) that defines it; a loaded name is kept in the
    package's ``namespace`` so the next access costs nothing."""

    def get(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    return get
