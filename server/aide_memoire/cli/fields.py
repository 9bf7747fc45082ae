"""The CLI's options for a memory's fields, derived from their one declaration.

``engine/core/fields.py`` says which fields a caller sets and which filter: ``store``
gets an option per settable field and ``recall`` / ``search`` one per exact-match
filter, typed and explained from the declaration (limits from ``domain.py``), so a new
field needs no edit here. The commands pass what was given on as keyword arguments.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..engine.core import domain, fields
from ..engine.core.fields import MemoryField
from ..engine.core.models import MemoryRecord

__all__ = ["field_options", "filter_options", "given_fields", "given_filters"]

F = TypeVar("F", bound=Callable[..., Any])


def _json_object(value: str | None) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise click.BadParameter("give a JSON object, e.g. '{\"ticket\": \"OPS-12\"}'")
    return parsed


def _help(f: MemoryField) -> str:
    match f.kind:
        case "kind":
            return f"{', '.join(domain.KINDS[:-1])} or {domain.KINDS[-1]}."
        case "tags":
            return (f"Comma-separated tags (at most {domain.TAGS_MAX}, each up to "
                    f"{domain.TAG_MAX} characters).")
        case "score":
            return f"{domain.IMPORTANCE_MIN:g} to {domain.IMPORTANCE_MAX:g}."
        case "time":
            first, _, rest = f.help.partition(". ")
            return f"{first.rstrip('.')} (ISO 8601).{' ' + rest if rest else ''}"
        case "json":
            return f"{f.help.rstrip('.')} (JSON text)."
        case _:
            return f.help or f"The memory's {f.name.replace('_', ' ')}."


def _option(f: MemoryField, default: Any, *, show: bool) -> Callable[[F], F]:
    flag = "--" + f.name.replace("_", "-")
    kwargs: dict[str, Any] = {"default": default, "help": _help(f)}
    if f.kind in ("score", "real"):
        kwargs["type"] = float
    elif f.kind == "count":
        kwargs["type"] = int
    elif f.kind == "json":
        kwargs["callback"] = lambda _ctx, _param, value: _json_object(value)
    if show and default not in (None, ""):
        kwargs["show_default"] = True
    return click.option(flag, f.name, **kwargs)


def _store_default(f: MemoryField, edge_defaults: dict[str, Any]) -> Any:
    """The declared default as the command line gives it (tags as comma-separated text)."""
    if f.name in edge_defaults:
        return edge_defaults[f.name]
    if f.input_default is not None:
        return ast.literal_eval(f.input_default)
    if f.kind == "tags":
        return ""
    info = MemoryRecord.model_fields.get(f.name)
    if info is None or info.is_required() or info.default_factory is not None:
        return None
    return info.get_default()


def field_options(edge_defaults: dict[str, Any]) -> Callable[[F], F]:
    """``store``'s options: one per settable field besides the text, in declared order."""

    def decorate(fn: F) -> F:
        for f in reversed(fields.settable()):
            fn = _option(f, _store_default(f, edge_defaults), show=True)(fn)
        return fn

    return decorate


def filter_options(fn: F) -> F:
    """An exact-match option per field declared ``filter="equals"`` (none today)."""
    for f in reversed(fields.filterable()):
        fn = _option(f, None, show=False)(fn)
    return fn


def given_fields(options: dict[str, Any]) -> dict[str, Any]:
    """The settable fields among a command's options, those left unset dropped."""
    names = {f.name for f in fields.settable()}
    return {k: v for k, v in options.items() if k in names and v is not None}


def given_filters(options: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields.filterable()}
    return {k: v for k, v in options.items() if k in names and v is not None}
