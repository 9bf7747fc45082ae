"""The step that gives an existing store the columns of fields declared since it was made.

The numbered schema steps made the ``memories`` table as it was then; a field added to
the one declaration (``core/fields.py``) later gets its column here, on either backend,
when a store opens: ``ALTER TABLE ... ADD COLUMN`` is portable as written, and each
backend says which columns it has (SQLite's ``PRAGMA table_info``, PostgreSQL's
``information_schema``). Only optional fields or fields with a SQL default can be added
to a table that already holds rows; the declaration check refuses the others.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from ..core import fields

__all__ = ["add_column_statements"]


def add_column_statements(
    present: Iterable[str], dialect: Literal["sqlite", "postgres"]
) -> list[str]:
    """``ALTER TABLE`` statements for each declared column the table lacks, in order."""
    have = set(present)
    statements = []
    for f in fields.FIELDS:
        if f.name in have:
            continue
        sql_type = f.sql_type if dialect == "sqlite" else f.pg_type
        if f.sql_default is not None:
            sql_type += f" NOT NULL DEFAULT {f.sql_default}"
        elif not f.optional:
            raise AssertionError(
                f"field {f.name!r} is neither optional nor given a sql_default in "
                "core/fields.py, so no column can be added for it to a store holding rows"
            )
        statements.append(f"ALTER TABLE memories ADD COLUMN {f.name} {sql_type}")
    return statements
