"""A memory's fields, declared once: every layer derives its part from ``FIELDS``.

One :class:`MemoryField` per column of the ``memories`` table, in stored order. From it:

- the row codec and both backends' column lists (``storage/rows.py``: ``COLUMNS``, the
  INSERT's values, JSON and time columns) and the step that adds a field's column to
  an existing store (``storage/columns.py``, run by both backends' migrations);
- the validation of what callers set (``validate.validate_fields``);
- the result models ``MemoryRecord`` and ``Hit``, the write path's ``NewRow`` and the
  typed keyword arguments of ``store``/``update``/``recall``/``search``
  (``StoreFields``, ``UpdateFields``, ``FieldFilters``): generated into
  ``record_models.py`` by ``fields_codegen.py`` (a test fails when that file is
  stale), so that mypy sees every field by name;
- the MCP tools' inputs (``mcp/fields.py``) and the CLI's options (``cli/fields.py``).

A field is described by what it *is* (its :data:`ValueKind`: how it is typed, stored,
checked and parsed), whether a caller may set it, whether recall returns it, and how
it filters. Adding a field is one entry here (then regenerate ``record_models.py`` and
the references): docs/architecture.md, "Adding a field".

Standard library only (the prompt hook's import path reaches ``core``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from . import domain

__all__ = [
    "FIELDS",
    "KINDS_OF_VALUE",
    "MemoryField",
    "ValueKind",
    "ValueType",
    "field",
    "filterable",
    "recalled",
    "record_fields",
    "settable",
    "written",
]

ValueKind = Literal[
    "id", "namespace", "kind", "text", "hash", "tags", "score", "label", "json", "time",
    "status", "count", "real",
]
# How a field filters: "equals" is derived everywhere (an exact-match parameter on recall
# and search, an option in the CLI); the others are the older hand-made filters
# (kinds=, tags=, min_importance=, since=/until=), named here so the table is complete.
Filter = Literal["equals", "any_kind", "any_tag", "at_least", "time_range"]
# What the store writes for a column the caller does not give on insert.
OnInsert = Literal["hash", "stamp", "observed_or_stamp"]


@dataclass(frozen=True)
class ValueType:
    """How one kind of value is typed (Python, as text for the generated models), stored
    (SQLite and PostgreSQL column types; ``json``/``time`` codecs) and given by a caller."""

    record: str  # the annotation in MemoryRecord / Hit when the field is required
    given: str  # the annotation a caller passes to store() (wider: text for times ...)
    sqlite: str
    postgres: str
    codec: Literal["plain", "json", "time"] = "plain"


KINDS_OF_VALUE: dict[ValueKind, ValueType] = {
    "id": ValueType("str", "str", "TEXT", "TEXT"),
    "namespace": ValueType("str", "str", "TEXT", "TEXT"),
    "kind": ValueType("MemoryKind", "str", "TEXT", "TEXT"),
    "text": ValueType("str", "str", "TEXT", "TEXT"),
    "hash": ValueType("str", "str", "TEXT", "TEXT"),
    "tags": ValueType("list[str]", "Iterable[str] | str", "TEXT", "TEXT", "json"),
    "score": ValueType("float", "float", "REAL", "DOUBLE PRECISION"),
    "label": ValueType("str", "str", "TEXT", "TEXT"),
    "json": ValueType("dict[str, Any]", "Mapping[str, Any]", "TEXT", "TEXT", "json"),
    "time": ValueType("datetime", "datetime | str", "TEXT", "TEXT", "time"),
    "status": ValueType("MemoryStatus", "str", "TEXT", "TEXT"),
    "count": ValueType("int", "int", "INTEGER", "BIGINT"),
    "real": ValueType("float", "float", "REAL", "DOUBLE PRECISION"),
}


@dataclass(frozen=True)
class MemoryField:
    """One column of a memory.

    ``settable``: a caller passes it to ``store`` / ``update`` (and the MCP tool, the CLI).
    ``written``: the write path (``NewRow``) carries it (settable ones, turn fields).
    ``recalled``: a recall hit (``Hit``) returns it; ``record``: ``MemoryRecord`` holds it.
    ``default``: Python source of the default in the models (``None``: required, or
    None when ``optional``); ``input_default``: the default when a caller leaves it out.
    ``help``: what an agent and a CLI user read about it (the MCP description).
    """

    name: str
    kind: ValueKind
    optional: bool = False
    default: str | None = None
    input_default: str | None = None
    settable: bool = False
    written: bool = False
    recalled: bool = False
    record: bool = True
    filter: Filter | None = None
    on_insert: OnInsert | None = None
    sql_default: str | None = None
    help: str = ""

    @property
    def value(self) -> ValueType:
        return KINDS_OF_VALUE[self.kind]

    @property
    def annotation(self) -> str:
        """The field's type in the result models, as Python source."""
        base = self.value.record
        return f"{base} | None" if self.optional else base

    @property
    def default_source(self) -> str | None:
        """Python source of the model default, or None when the field is required."""
        if self.optional:
            return "None"
        return self.default

    @property
    def sql_type(self) -> str:
        return self.value.sqlite

    @property
    def pg_type(self) -> str:
        return self.value.postgres


_ID = "An id from a store, recall or search."

FIELDS: tuple[MemoryField, ...] = (
    MemoryField("id", "id", written=True, recalled=True),
    MemoryField("namespace", "namespace", written=True, recalled=True),
    MemoryField("kind", "kind", input_default='"note"', settable=True, written=True, recalled=True,
                filter="any_kind",
                help="learning: a lesson; fact: stable; summary: a digest; note: other."),
    MemoryField("content", "text", settable=True, written=True, recalled=True,
                help="Self-contained: clear months later."),
    MemoryField("content_hash", "hash", record=False, on_insert="hash"),
    MemoryField("tags", "tags", default="Field(default_factory=list)", settable=True,
                written=True, recalled=True, filter="any_tag", sql_default="'[]'",
                help="Short labels to filter by later."),
    MemoryField("importance", "score", default="IMPORTANCE_DEFAULT", settable=True,
                written=True, filter="at_least", sql_default=str(domain.IMPORTANCE_DEFAULT),
                help="0 (trivia) to 1 (must never be forgotten)."),
    MemoryField("source", "label", optional=True, settable=True, written=True,
                recalled=True, help="Origin, e.g. a file path, URL or 'user'."),
    MemoryField("metadata", "json", default="Field(default_factory=dict)", settable=True,
                written=True, recalled=True, sql_default="'{}'",
                help="Any JSON object, returned on recall."),
    MemoryField("created_at", "time", recalled=True, on_insert="stamp"),
    MemoryField("updated_at", "time", on_insert="stamp"),
    MemoryField("observed_at", "time", optional=True, settable=True, written=True,
                recalled=True, filter="time_range", help="When it happened. Default: now."),
    MemoryField("valid_from", "time", optional=True, on_insert="observed_or_stamp"),
    MemoryField("valid_to", "time", optional=True),
    MemoryField("superseded_by", "id", optional=True, recalled=True,
                help="The memory that replaced this one, if any (newer first)."),
    MemoryField("status", "status", default='"active"', written=True, recalled=True,
                sql_default="'active'"),
    MemoryField("access_count", "count", default="0", sql_default="0"),
    MemoryField("last_accessed_at", "time", optional=True),
    MemoryField("utility", "real", default="0.0", sql_default="0.0"),
    MemoryField("session_id", "label", optional=True, written=True, recalled=True),
    MemoryField("speaker", "label", optional=True, written=True, recalled=True),
    MemoryField("role", "label", optional=True, written=True),
    MemoryField("position", "count", optional=True, written=True, recalled=True),
    MemoryField("reply_to", "id", optional=True, written=True),
    MemoryField("context", "text", optional=True, written=True),
)

# Hit's own fields, between its identity (id, namespace, content, kind) and the fields
# it shares with the record: the scores recall computed. (name, annotation, default, help)
HIT_SCORES: tuple[tuple[str, str, str | None, str], ...] = (
    ("score", "float", None, "Final score; higher is better, comparable within one call."),
    ("scores", "dict[str, float]", "Field(default_factory=dict)",
     "Each retriever's own score for this memory."),
    ("ranks", "dict[str, int]", "Field(default_factory=dict)",
     "Each retriever's 1-based rank for this memory."),
)
HIT_HEAD = ("id", "namespace", "content", "kind")

_BY_NAME = {f.name: f for f in FIELDS}


def field(name: str) -> MemoryField:
    return _BY_NAME[name]


def record_fields() -> tuple[MemoryField, ...]:
    return tuple(f for f in FIELDS if f.record)


def settable() -> tuple[MemoryField, ...]:
    """What store() takes besides its text, in declared order."""
    return tuple(f for f in FIELDS if f.settable and f.name != "content")


def written() -> tuple[MemoryField, ...]:
    return tuple(f for f in FIELDS if f.written)


def recalled() -> tuple[MemoryField, ...]:
    return tuple(f for f in FIELDS if f.recalled)


def filterable() -> tuple[MemoryField, ...]:
    """The fields with a derived exact-match filter (``filter="equals"``)."""
    return tuple(f for f in FIELDS if f.filter == "equals")


def _check() -> None:
    names = [f.name for f in FIELDS]
    if len(set(names)) != len(names) or not all(n.isidentifier() for n in names):
        raise AssertionError(f"FIELDS must name each column once: {names}")
    for f in FIELDS:
        if f.filter == "equals" and f.kind not in ("label", "id", "count", "score", "real"):
            raise AssertionError(f"{f.name}: an equality filter needs a plain value")


_check()
