"""Writes ``record_models.py`` from ``fields.FIELDS``: the typed models of a memory.

Generated rather than built at run time so that mypy (strict) knows every field by name
and type; ``tests/engine/test_fields.py`` fails when the file on disk is not what this
module writes. Run, from the repository's root::

    python -m aide_memoire.engine.core.fields_codegen \
        > server/aide_memoire/engine/core/record_models.py
"""

from __future__ import annotations

import json
import sys

from .fields import FIELDS, HIT_HEAD, HIT_SCORES, MemoryField, field, filterable, settable

__all__ = ["main", "render"]

_HEADER = '''"""A memory's models, generated from ``fields.FIELDS`` by ``fields_codegen.py``.

Do not edit: change ``fields.py`` and run ``python -m
aide_memoire.engine.core.fields_codegen > server/aide_memoire/engine/core/record_models.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from .domain import IMPORTANCE_DEFAULT, MemoryKind, MemoryStatus

__all__ = ["FieldFilters", "Hit", "MemoryRecord", "NewRow", "StoreFields", "UpdateFields"]

# Kept by name for the generated annotations (ruff would drop an unused import).
_TYPES = (Iterable, Mapping, datetime, MemoryKind, MemoryStatus)
'''


def _described(name: str, annotation: str, inner: str, text: str) -> str:
    return (f"    {name}: {annotation} = Field(\n"
            f"        {inner}description={json.dumps(text)}\n    )")


def _model_line(f: MemoryField, *, describe: bool) -> str:
    default = f.default_source
    if describe and f.help:
        inner = "" if default is None else (
            f"default={default}, " if not default.startswith("Field(")
            else default[len("Field("):-1] + ", ")
        return _described(f.name, f.annotation, inner, f.help)
    return f"    {f.name}: {f.annotation}" + ("" if default is None else f" = {default}")


_FROZEN = "    model_config = ConfigDict(frozen=True)"


def _record() -> list[str]:
    lines = ["", "", "class MemoryRecord(BaseModel):",
             '    """A stored memory, exactly as kept."""', "", _FROZEN, ""]
    lines += [_model_line(f, describe=False) for f in FIELDS if f.record]
    return lines


def _hit() -> list[str]:
    lines = ["", "", "class Hit(BaseModel):",
             '    """One recalled memory, with why it came back."""', "", _FROZEN, ""]
    lines += [_model_line(field(name), describe=False) for name in HIT_HEAD]
    for name, annotation, default, text in HIT_SCORES:
        inner = "" if default is None else default[len("Field("):-1] + ", "
        lines.append(_described(name, annotation, inner, text))
    rest = [f for f in FIELDS if f.recalled and f.name not in HIT_HEAD]
    lines += [_model_line(f, describe=not f.settable) for f in rest]
    lines += [
        "",
        "    @classmethod",
        "    def of(",
        "        cls, record: MemoryRecord, score: float, scores: dict[str, float],",
        "        ranks: dict[str, int],",
        "    ) -> Hit:",
        '        """The hit for a recalled record: its recalled fields and the scores."""',
        "        return cls(",
        "            score=score, scores=scores, ranks=ranks,",
        *[f"            {f.name}=record.{f.name}," for f in FIELDS if f.recalled],
        "        )",
    ]
    return lines


def _row_type(f: MemoryField) -> str:
    base = "str" if f.kind in ("kind", "status") else f.value.record
    return f"{base} | None" if f.optional or f.name == "id" else base


def _row_default(f: MemoryField) -> str:
    if f.optional or f.name == "id":
        return "None"
    if f.input_default is not None:
        return f.input_default
    if f.default is None:
        raise AssertionError(f"{f.name}: a written field needs a default or to be optional")
    if f.default == "Field(default_factory=list)":
        return "field(default_factory=list)"
    if f.default == "Field(default_factory=dict)":
        return "field(default_factory=dict)"
    return f.default


def _new_row() -> list[str]:
    required = [f for f in FIELDS if f.written and f.name in ("namespace", "content")]
    rest = [f for f in FIELDS if f.written and f not in required and f.name != "id"]
    lines = ["", "", "@dataclass(kw_only=True)", "class NewRow:",
             '    """What the write path hands the store for one new memory."""', ""]
    lines += [f"    {f.name}: {_row_type(f)}" for f in required]
    lines += [f"    {f.name}: {_row_type(f)} = {_row_default(f)}" for f in rest]
    lines.append(f"    id: {_row_type(field('id'))} = None")
    return lines


def _given(f: MemoryField, *, nullable: bool) -> str:
    text = f.value.given
    return f"{text} | None" if nullable or f.optional or f.kind == "json" else text


def _typed_dicts() -> list[str]:
    lines = ["", "", "class StoreFields(TypedDict, total=False):",
             '    """What ``store`` takes besides its text and namespace, by name."""', ""]
    lines += [f"    {f.name}: {_given(f, nullable=False)}" for f in settable()]
    lines += ["", "", "class UpdateFields(TypedDict, total=False):",
              '    """What ``update`` may change (None leaves a field as it is)."""', "",
              f"    content: {_given(field('content'), nullable=True)}"]
    lines += [f"    {f.name}: {_given(f, nullable=True)}" for f in settable()]
    lines += ["", "", "class FieldFilters(TypedDict, total=False):",
              '    """Exact-match filters of recall and search (fields declared "equals")."""',
              ""]
    lines += [f"    {f.name}: {f.value.given}" for f in filterable()] or ["    pass"]
    return lines


def render() -> str:
    """The whole generated module, as text."""
    body = [*_record(), *_hit(), *_new_row(), *_typed_dicts()]
    return _HEADER + "\n".join(body) + "\n"


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":  # pragma: no cover - tests/engine/test_fields.py calls render()
    main()
