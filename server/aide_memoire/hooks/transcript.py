"""Reading Claude Code transcripts (``~/.claude/projects/<slug>/<session>.jsonl``).

Each line is one JSON object. What becomes memory:

- ``type: user`` with text content: what the person said (``isMeta`` lines, command
  wrappers and tool results are not);
- ``type: assistant`` text blocks: what Claude answered (thinking blocks are not);
- each ``tool_use`` block: one short line (tool, command or path, and whether its
  ``tool_result`` reported an error), never the tool's output.

Sidechain lines (a subagent's own conversation), summaries, attachments (hook output,
ours included: injected memory never comes back as a new turn), API error lines, queue
and snapshot records are skipped; so are malformed lines (counted). Reading is incremental:
it starts at a byte offset and stops before a last line that is not yet complete.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Chunk", "Message", "read_transcript"]

MAX_TOOL_DETAIL = 160
# Inputs that name what a tool acted on, in order of preference.
_TOOL_KEYS = ("command", "file_path", "path", "pattern", "url", "query", "description",
              "prompt", "notebook_path", "skill")
# Text Claude Code writes on the person's behalf: slash-command wrappers and the output
# of `!` shell commands (tool output, in effect).
_WRAPPERS = ("<command-name>", "<command-message>", "<local-command-stdout>",
             "<local-command-stderr>", "<command-args>", "<bash-input>", "<bash-stdout>",
             "<bash-stderr>")


@dataclass
class Message:
    """One turn worth keeping: who said it, what, when, and the line's uuid."""

    uuid: str
    speaker: str  # "user" | "assistant" | "tool"
    text: str
    timestamp: str | None
    session_id: str | None
    cwd: str | None = None
    tool_use_id: str | None = None  # for tool lines: the call whose result decides "failed"
    offset: int = 0  # byte offset of the line it came from


@dataclass
class Chunk:
    """What one read found: messages, where to continue, and what was skipped."""

    messages: list[Message] = field(default_factory=list)
    end: int = 0  # byte offset after the last complete line read
    malformed: int = 0
    results: dict[str, bool] = field(default_factory=dict)  # tool_use id -> failed


def _tool_line(block: dict[str, Any]) -> str:
    name = str(block.get("name") or "tool")
    given = block.get("input")
    detail = ""
    if isinstance(given, dict):
        for key in _TOOL_KEYS:
            value = given.get(key)
            if isinstance(value, str) and value.strip():
                detail = " ".join(value.split())
                break
    if len(detail) > MAX_TOOL_DETAIL:
        detail = detail[: MAX_TOOL_DETAIL - 3] + "..."
    return f"{name}: {detail}" if detail else name


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [str(b.get("text") or "") for b in content
            if isinstance(b, dict) and b.get("type") == "text"]


def _user_text(record: dict[str, Any], content: Any) -> str:
    if record.get("isMeta") or record.get("isCompactSummary"):
        return ""
    text = "\n".join(t for t in _texts(content) if t.strip()).strip()
    if text.startswith(_WRAPPERS):
        return ""
    return text


def _parse(record: dict[str, Any], chunk: Chunk, offset: int) -> Iterator[Message]:
    kind = record.get("type")
    if kind not in ("user", "assistant") or record.get("isSidechain"):
        return
    if record.get("isApiErrorMessage"):  # "API Error: ..." written as if Claude said it
        return
    uuid = record.get("uuid")
    message = record.get("message")
    if not isinstance(uuid, str) or not uuid or not isinstance(message, dict):
        chunk.malformed += 1
        return
    content = message.get("content")
    stamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
    session = record.get("sessionId") if isinstance(record.get("sessionId"), str) else None
    cwd = record.get("cwd") if isinstance(record.get("cwd"), str) else None
    if kind == "user":
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    chunk.results[str(block.get("tool_use_id"))] = bool(block.get("is_error"))
        text = _user_text(record, content)
        if text:
            yield Message(uuid, "user", text, stamp, session, cwd, offset=offset)
        return
    text = "\n".join(t for t in _texts(content) if t.strip()).strip()
    if text:
        yield Message(uuid, "assistant", text, stamp, session, cwd, offset=offset)
    if isinstance(content, list):
        for number, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                yield Message(f"{uuid}#tool{number}", "tool", _tool_line(block), stamp, session,
                              cwd, tool_use_id=str(block.get("id") or ""), offset=offset)


def read_transcript(path: str | os.PathLike[str], start: int = 0) -> Chunk:
    """The messages of ``path`` from byte ``start`` on (complete lines only)."""
    chunk = Chunk(end=start)
    with Path(path).open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if start > size:  # the file was replaced or cut: read it again from the top
            start = chunk.end = 0
        fh.seek(start)
        offset = start
        for raw in fh:
            if not raw.endswith(b"\n"):
                break  # still being written: the next read starts here
            at = offset
            offset += len(raw)
            chunk.end = offset
            line = raw.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                chunk.malformed += 1
                continue
            if not isinstance(record, dict):
                chunk.malformed += 1
                continue
            chunk.messages.extend(_parse(record, chunk, at))
    return chunk
