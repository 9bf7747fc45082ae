"""The tools' parameters for a memory's fields, derived from their one declaration.

``engine/core/fields.py`` says which fields a caller sets and which filter; this module
turns each into the pydantic field an agent reads (type and bounds from ``models``, the
description from the declaration), so ``memory_store``'s parameters and the exact-match
filters of ``memory_recall`` / ``memory_search`` follow the declaration with no edit here.
"""

from __future__ import annotations

import ast
from typing import Any, TypeVar

from pydantic import BaseModel, Field, create_model

from ..engine.core import domain as d
from ..engine.core import fields
from ..engine.core.models import MemoryRecord
from .models import Content, Label, MemoryId, StoreKind, Tags, ToolInput, When

__all__ = ["filter_fields", "input_model", "settable_fields", "values_of"]

T = TypeVar("T", bound=ToolInput)

# What a caller gives for each kind of value (bounds are the engine's, from domain.py).
_TYPES: dict[fields.ValueKind, Any] = {
    "text": Content,
    "kind": StoreKind,
    "tags": Tags,
    "score": float,
    "json": dict[str, Any],
    "time": When,
    "label": Label,
    "id": MemoryId,
    "count": int,
    "real": float,
}
_BOUNDS: dict[fields.ValueKind, dict[str, Any]] = {
    "score": {"ge": d.IMPORTANCE_MIN, "le": d.IMPORTANCE_MAX},
    "count": {"ge": 0},
}
_FACTORIES: dict[fields.ValueKind, Any] = {"tags": list, "json": dict}


def _default(f: fields.MemoryField) -> Any:
    if f.input_default is not None:
        return ast.literal_eval(f.input_default)
    info = MemoryRecord.model_fields.get(f.name)
    if info is None or info.is_required() or f.kind in _FACTORIES:
        return None
    return info.get_default()


def _parameter(f: fields.MemoryField, *, edge_defaults: dict[str, Any],
               optional: bool = False) -> tuple[Any, Any]:
    annotation = _TYPES[f.kind]
    extra = dict(_BOUNDS.get(f.kind, {}))
    description = f.help or f"The memory's {f.name.replace('_', ' ')}."
    if f.name in edge_defaults:
        return annotation, Field(default=edge_defaults[f.name], description=description,
                                 **extra)
    if f.name == "content" and not optional:
        return annotation, Field(description=description, **extra)
    if f.kind in _FACTORIES and not optional:
        return annotation, Field(default_factory=_FACTORIES[f.kind], description=description,
                                 **extra)
    default = None if optional else _default(f)
    if default is None:
        annotation = annotation | None
    return annotation, Field(default=default, description=description, **extra)


def settable_fields(edge_defaults: dict[str, Any]) -> dict[str, Any]:
    """``memory_store``'s parameters for the fields a caller sets, text first."""
    chosen = [fields.field("content"), *fields.settable()]
    return {f.name: _parameter(f, edge_defaults=edge_defaults) for f in chosen}


def filter_fields() -> dict[str, Any]:
    """An exact-match parameter per field declared ``filter="equals"`` (none: no filter)."""
    return {f.name: _parameter(f, edge_defaults={}, optional=True)
            for f in fields.filterable()}


def input_model(name: str, parameters: dict[str, Any], base: type[T]) -> type[T]:
    """A tool's input model: ``base``'s parameters and these (unknown ones refused).
    No docstring: it would be published as the schema's description in tools/list."""
    model: type[T] = create_model(
        name, __base__=base, __module__=base.__module__, **parameters
    )
    return model


def values_of(args: BaseModel, names: Any) -> dict[str, Any]:
    """The given arguments among ``names``, as the engine's keyword arguments."""
    return {name: getattr(args, name) for name in names}
