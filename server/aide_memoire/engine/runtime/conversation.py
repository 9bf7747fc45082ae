"""Conversation turns: validation, positions, reply links and the context each is indexed with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..core import validate as v
from ..core.errors import InvalidInput
from ..storage.store import NewRow, StoredTurn

__all__ = ["REPLY_TO_PREVIOUS", "Turn", "plan_turns"]

# Marker resolved by the write path to the id of the row written just before.
REPLY_TO_PREVIOUS = "@previous"
_TURN_FIELDS = {"speaker", "content", "role", "observed_at", "metadata"}


@dataclass
class Turn:
    speaker: str
    content: str
    role: str | None = None
    observed_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, number: int, item: Mapping[str, Any], *, max_bytes: int) -> Turn:
        if not isinstance(item, Mapping):
            raise InvalidInput(f"turn {number} must be an object with 'speaker' and 'content'")
        unknown = set(item) - _TURN_FIELDS
        if unknown:
            raise InvalidInput(f"turn {number} has unknown fields: {sorted(unknown)}")
        speaker = item.get("speaker")
        if not isinstance(speaker, str) or not speaker.strip() or len(speaker) > 200:
            raise InvalidInput(f"turn {number} needs a 'speaker' name (1 to 200 characters)")
        role = item.get("role")
        if role is not None and not isinstance(role, str):
            raise InvalidInput(f"turn {number}: 'role' must be a string")
        try:
            content = v.validate_content(item.get("content"), max_bytes=max_bytes)
        except InvalidInput as exc:
            raise type(exc)(f"turn {number}: {exc}") from None
        return cls(
            speaker=speaker.strip(),
            content=content,
            role=role,
            observed_at=v.parse_time(item.get("observed_at"), field=f"turn {number} observed_at"),
            metadata=v.validate_metadata(item.get("metadata")),
        )

    @classmethod
    def parse_context(cls, item: Mapping[str, Any] | str) -> Turn:
        if isinstance(item, str):
            return cls(speaker="", content=item)
        if not isinstance(item, Mapping):
            raise InvalidInput("preceding turns must be strings or objects with 'content'")
        return cls(speaker=str(item.get("speaker") or ""), content=str(item.get("content") or ""))

    def line(self) -> str:
        return f"{self.speaker}: {self.content}" if self.speaker else self.content


def plan_turns(
    turns: Sequence[Turn],
    *,
    namespace: str,
    session_id: str,
    default_time: datetime | None,
    context_turns: int,
    stored_tail: Sequence[StoredTurn],
    preceding: Sequence[Turn],
    source: str | None,
) -> list[NewRow]:
    """Rows for the turns: positions continue the session, replies link to the turn before.

    Stored neighbours reach a turn's keyword doc through the session (compose.py), so a
    forgotten turn leaves no copy behind; ``context`` keeps only the ``preceding`` lines
    the caller gave that are not stored themselves (the last ``context_turns`` of them).
    """
    start = stored_tail[-1].position + 1 if stored_tail else len(preceding)
    reply_to = stored_tail[-1].id if stored_tail else None
    given = [t.line() for t in preceding] if not stored_tail else []
    rows: list[NewRow] = []
    for offset, turn in enumerate(turns):
        window = given[len(given) - max(0, context_turns - offset) :] if context_turns else []
        context = "\n".join(window[-context_turns:]) if offset < context_turns else ""
        rows.append(
            NewRow(
                namespace=namespace,
                kind="turn",
                content=turn.content,
                source=source,
                metadata=turn.metadata,
                observed_at=turn.observed_at or default_time,
                session_id=session_id,
                speaker=turn.speaker,
                role=turn.role,
                position=start + offset,
                reply_to=reply_to if offset == 0 else REPLY_TO_PREVIOUS,
                context=context or None,
            )
        )
    return rows
