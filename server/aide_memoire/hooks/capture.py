"""Capture of Claude Code transcripts as conversation turns, safely and exactly once.

Before anything is written (or logged), a turn loses every ``<private>...</private>``
span; then it goes through ``Memory.store_conversation_report`` like any write, which
replaces each secret span by ``[redacted:<kind>]`` (trust/redact.py, once, in the write
pipeline: its report gives the count) and holds suspected injection for review. A turn
is keyed by the transcript line's ``uuid`` (kept in its metadata):
a line already stored in the namespace is never stored again, whatever the overlap of
captures (Stop, PreCompact, SessionEnd, a resumed session's copy, a backfill).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.trust.redact import redact_secrets
from .feedback import learn_from_replies
from .transcript import Message, read_transcript

if TYPE_CHECKING:
    from ..engine.core.settings import Settings
    from ..engine.facade.memory import Memory

__all__ = ["CaptureReport", "capture_enabled", "capture_transcript", "strip_private"]

SOURCE = "claude-code"
CAPTURE_OFF_FILE = (".aide-memoire", "capture-off")
BATCH = 200
_PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)


@dataclass
class CaptureReport:
    """What one capture did (or, dry, would do)."""

    sessions: int = 0
    turns: int = 0  # added (or that would be added)
    present: int = 0  # already stored: skipped
    redacted: int = 0  # secret spans removed
    private: int = 0  # <private> spans removed
    malformed: int = 0
    cursor: int = 0
    sessions_seen: set[str] = field(default_factory=set)


def strip_private(text: str) -> tuple[str, int]:
    """``text`` without its ``<private>`` spans (an unclosed one runs to the end)."""
    kept, count = _PRIVATE.subn("", text)
    return kept, count


def capture_enabled(settings: Settings, root: Path | None) -> tuple[bool, str]:
    """Whether capture is on for the project at ``root``, and why."""
    if not settings.capture:
        return False, "off: setting capture is false (AIDE_MEMOIRE_CAPTURE)"
    if root is not None and root.joinpath(*CAPTURE_OFF_FILE).exists():
        return False, f"off: {root.joinpath(*CAPTURE_OFF_FILE)} exists"
    return True, "on"


def _present(memory: Memory, namespace: str, uuids: Sequence[str]) -> set[str]:
    """The uuids among ``uuids`` already stored in ``namespace``."""
    if not uuids:
        return set()
    with memory.internals.db.read() as conn:
        stored = memory.internals.store.metadata_values(conn, namespace, "turn", SOURCE, "uuid")
    return stored & set(uuids)


def _clean(text: str, report: CaptureReport, max_bytes: int) -> str:
    text, private = strip_private(text)
    report.private += private
    text = text.strip()
    encoded = text.encode("utf-8")
    if len(encoded) > max_bytes:  # keep the start of a huge turn rather than lose it
        # Redacted before the cut, which could leave half a secret the screen no longer
        # recognises; the write pipeline redacts every other turn.
        redaction = redact_secrets(text)
        report.redacted += len(redaction.findings)
        encoded = redaction.text.encode("utf-8")
        if len(encoded) > max_bytes:
            text = encoded[: max_bytes - 16].decode("utf-8", "ignore") + " [truncated]"
        else:
            text = redaction.text
    return text


def _turn(message: Message, text: str, failed: bool | None) -> dict[str, Any]:
    if message.speaker == "tool":
        outcome = "no result" if failed is None else "failed" if failed else "ok"
        text = f"{text} ({outcome})"
    turn: dict[str, Any] = {
        "speaker": message.speaker,
        "role": message.speaker,
        "content": text,
        "metadata": {"uuid": message.uuid},
    }
    if message.timestamp:
        turn["observed_at"] = message.timestamp
    return turn


def _write(memory: Memory, namespace: str, session: str, turns: list[dict[str, Any]],
           report: CaptureReport) -> None:
    for start in range(0, len(turns), BATCH):
        written = memory.store_conversation_report(
            turns[start : start + BATCH], namespace=namespace, session_id=session,
            source=SOURCE, secrets="redact")
        # A secret is also found again in the next turn's context (its neighbour's text):
        # the turn's own text counts it once.
        report.redacted += sum(1 for r in written.redactions if r.field == "content")


def capture_transcript(
    memory: Memory,
    path: str | Path,
    *,
    namespace: str,
    session_id: str | None = None,
    start: int = 0,
    final: bool = False,
    dry_run: bool = False,
) -> CaptureReport:
    """Store the new turns of the transcript at ``path`` (from byte ``start``).

    A tool call whose result is not in the file yet stops the capture before it (the
    next one continues there) unless ``final``. ``report.cursor`` says where to resume.
    """
    chunk = read_transcript(path, start)
    report = CaptureReport(malformed=chunk.malformed, cursor=chunk.end)
    messages = chunk.messages
    for index, message in enumerate(messages):
        if message.speaker == "tool" and message.tool_use_id not in chunk.results and not final:
            messages = messages[:index]
            report.cursor = message.offset
            break
    present = _present(memory, namespace, [m.uuid for m in messages])
    report.present = sum(1 for m in messages if m.uuid in present)
    by_session: dict[str, list[dict[str, Any]]] = {}
    max_bytes = memory.settings.max_content_bytes
    for message in messages:
        if message.uuid in present:
            continue
        text = _clean(message.text, report, max_bytes)
        if not text:
            continue
        session = session_id or message.session_id or Path(path).stem
        failed = chunk.results.get(message.tool_use_id or "")
        by_session.setdefault(session, []).append(_turn(message, text, failed))
        present.add(message.uuid)  # a line repeated within the file counts once
    report.turns = sum(len(t) for t in by_session.values())
    report.sessions_seen = set(by_session)
    report.sessions = len(by_session)
    if not dry_run:
        for session, turns in by_session.items():
            _write(memory, namespace, session, turns, report)
            # Did the replies use what the prompt hook injected? (lifecycle feedback)
            learn_from_replies(memory, namespace, session,
                               [t["content"] for t in turns if t["speaker"] == "assistant"])
    return report
