"""The field types every tool family's inputs share. Their descriptions are what an agent
reads; their bounds are engine/core/domain.py's, so a wrong argument is refused by the schema
before any engine call with the limits the engine itself applies (and the engine still
validates everything it is handed).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from ..engine.core import domain as d
from ..engine.core import validate as v
from ..engine.core.domain import MemoryKind, StoreKind

__all__ = [
    "AnyKind",
    "AsOf",
    "Content",
    "IncludeSuperseded",
    "Label",
    "NAMESPACE_HELP",
    "MemoryId",
    "Namespace",
    "Query",
    "ResultLimit",
    "Role",
    "Since",
    "StoreKind",
    "Tag",
    "Tags",
    "ToolInput",
    "Until",
    "When",
]

AnyKind = MemoryKind


def _iso_time(value: object) -> object:
    """Only ISO 8601 text (or a datetime): a bare number such as 2024 is refused, never
    read as seconds since 1970; the engine's year bounds apply."""
    if isinstance(value, str | datetime):
        return v.parse_time(value)
    raise ValueError("a time must be an ISO 8601 string such as 2024-05-08 or 2024-05-08T13:56Z")


When = Annotated[datetime, BeforeValidator(_iso_time)]

# Said once, in the server's instructions, rather than in all fourteen tools' schemas
# (schema.compact_schema leaves it out of tools/list; docs/tools.md keeps it).
NAMESPACE_HELP = "Default: this project's."
Namespace = Annotated[
    Annotated[str, Field(min_length=1, max_length=d.NAMESPACE_MAX,
                         pattern=d.NAMESPACE_PATTERN)] | None,
    Field(description=NAMESPACE_HELP),
]
Tag = Annotated[str, Field(min_length=1, max_length=d.TAG_MAX, pattern=d.TAG_PATTERN)]
Tags = Annotated[list[Tag], Field(max_length=d.TAGS_MAX)]
# maxLength counts characters; the engine's limit is in bytes (see engine/core/domain.py).
Content = Annotated[str, Field(min_length=1, max_length=d.CONTENT_MAX_BYTES)]
Label = Annotated[str, Field(min_length=1, max_length=d.FIELD_MAX)]
Query = Annotated[str, Field(min_length=1, max_length=d.QUERY_MAX)]
ResultLimit = Annotated[int, Field(ge=1, le=d.RESULTS_MAX)]
MemoryId = Annotated[
    str,
    # No pattern published: ids come from the server, and the engine's check names the fix.
    Field(min_length=1, max_length=d.ID_MAX,
          description="An id from a store, recall or search."),
]
Since = Annotated[
    When | None, Field(description="Observed at or after.")
]
Until = Annotated[
    When | None, Field(description="Observed at or before.")
]
AsOf = Annotated[
    When | None,
    Field(description="Answer as of this time. Default: now."),
]
IncludeSuperseded = Annotated[
    bool,
    Field(description="Also replaced memories (history)."),
]
Role = Literal["user", "assistant", "system", "tool"]


class ToolInput(BaseModel):
    """Base of every tool's arguments: unknown arguments are refused, not ignored."""

    model_config = ConfigDict(extra="forbid")
