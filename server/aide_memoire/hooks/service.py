"""The hook operations on a ``Memory``: one entry for the hook process and the daemon alike.

A request is a small JSON object (``op`` plus arguments); the answer is one too. The
prompt hook sends it to the warm loopback daemon when one runs (mcp/http.py, route
``/hook``) and runs it in process, keyword-only, otherwise: the same code either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.core.errors import InvalidInput
from ..engine.core.validate import validate_namespace
from ..engine.ops.adopt import auto_adopt
from .briefing import briefing
from .capture import capture_transcript
from .prompt import answer_of, prompt_context
from .state import capture_lock

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory

__all__ = ["OPS", "handle"]

OPS = ("briefing", "prompt", "capture")


def _text(request: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = request.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"hook request needs '{key}' as a non-empty string")
    return value


def handle(memory: Memory, request: dict[str, Any]) -> dict[str, Any]:
    """Run one hook request; raises InvalidInput for a malformed one."""
    op = request.get("op")
    namespace = validate_namespace(_text(request, "namespace"))
    session = _text(request, "session_id", required=False)
    settings = memory.settings
    if op == "briefing":
        legacy = _text(request, "legacy", required=False)
        if legacy is not None:
            counts = memory.internals.store.namespace_counts(memory.internals.db.conn())
            auto_adopt(memory.internals.db, counts, validate_namespace(legacy), namespace,
                       actor=memory.actor)
        shown = briefing(memory, namespace, budget_tokens=settings.hook_briefing_tokens,
                         current_session=session)
        return {"text": shown.text, "ids": list(shown.ids)}
    if op == "prompt":
        prompt = _text(request, "prompt")
        assert prompt is not None
        exclude = request.get("exclude") or []
        injection = prompt_context(
            memory, namespace, prompt, floor=settings.hook_recall_floor,
            budget_tokens=settings.hook_recall_tokens,
            exclude={str(i) for i in exclude} if isinstance(exclude, list) else set(),
            session_id=session,
        )
        return answer_of(injection)
    if op == "capture":
        path = _text(request, "transcript_path")
        assert path is not None
        if not path.endswith(".jsonl") or not Path(path).is_file():
            # The daemon reads only what looks like a transcript, never any file it is named.
            raise InvalidInput("transcript_path must name an existing .jsonl transcript")
        start = request.get("start", 0)
        with capture_lock(memory.settings.home, namespace):
            report = capture_transcript(
                memory, Path(path), namespace=namespace, session_id=session,
                start=start if isinstance(start, int) and start >= 0 else 0,
                final=bool(request.get("final")),
            )
        return {"turns": report.turns, "present": report.present, "cursor": report.cursor,
                "redacted": report.redacted, "private": report.private,
                "malformed": report.malformed}
    raise InvalidInput(f"hook request op must be one of {', '.join(OPS)}, got {op!r}")
