"""The injection log: what each prompt of each session received, and why.

One JSON line per prompt that got memory, in ``<home>/hooks/injections.jsonl`` (0600,
rotated once at ``MAX_BYTES``): the time, the session, the namespace, how it was served
(``mcp_tool``, ``daemon`` or ``process``), an excerpt of the prompt (``<private>`` spans
and secrets removed, as capture removes them) and, per memory, the signals that passed
the gate. ``aide-memoire injections`` and the web page's "Injected" view read it; the
capture reads it to learn which injections the reply used (feedback.py).

A file, not a table: the log is the hooks' own record in the data home, written by
whichever process served the prompt (the MCP server, the daemon or a hook process)
without a schema step, and it never holds more than an excerpt of what the store holds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

__all__ = ["LOG_PARTS", "describe_reasons", "injection_reasons", "read_injections",
           "record_injection", "record_request"]

LOG_PARTS = ("hooks", "injections.jsonl")
MAX_BYTES = 4_000_000
PROMPT_CHARS = 240

try:
    import fcntl
except ImportError:  # Windows: appends of one short line do not interleave in practice
    fcntl = None  # type: ignore[assignment]


def injection_reasons(injection: Any) -> list[dict[str, Any]]:
    """Per injected memory, what passed the gate. The one place that knows the shape of
    the gate's reasons: an ``Injection`` with ``reasons`` (dataclasses), an answer dict of
    the hook service with ``reasons`` (dicts), or ids alone."""
    if isinstance(injection, dict):
        ids = [str(i) for i in injection.get("ids") or []]
        given = injection.get("reasons") or []
    else:
        ids = [str(i) for i in getattr(injection, "ids", ())]
        given = list(getattr(injection, "reasons", ()) or ())
    reasons = []
    for i, memory_id in enumerate(ids):
        reason: Any = given[i] if i < len(given) else {}
        if dataclasses.is_dataclass(reason) and not isinstance(reason, type):
            reason = dataclasses.asdict(reason)
        entry = ({k: v for k, v in reason.items() if k != "id"}
                 if isinstance(reason, dict) else {})
        reasons.append({"id": memory_id, **entry})
    return reasons


def describe_reasons(reason: dict[str, Any]) -> str:
    """One memory's gate signals as ``name value`` pairs, for a person to read (empty
    when only its id was recorded)."""
    shown = [f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
             for k, v in reason.items() if k not in ("id", "decision") and v is not None]
    return ", ".join(shown)


def _excerpt(prompt: str) -> str:
    # Here, not at the top: the prompt hook's keyword path imports this module for every
    # prompt and pays for the secret patterns only when something was injected.
    from ..engine.trust.redact import redact_secrets
    from .capture import strip_private  # capture reads this log (feedback.py): no cycle

    text, _ = strip_private(prompt)
    text = " ".join(redact_secrets(text).text.split())
    return text if len(text) <= PROMPT_CHARS else text[: PROMPT_CHARS - 1] + "…"


def _path(home: Path) -> Path:
    path = home.joinpath(*LOG_PARTS)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def record_injection(home: Path, *, session_id: str | None, namespace: str, prompt: str,
                     answer: Any, served_by: str) -> None:
    """Append one prompt's injection (nothing when it received nothing). Never raises:
    the log must not cost a prompt its memory."""
    reasons = injection_reasons(answer)
    if not reasons:
        return
    line = json.dumps({"time": time.time(), "session_id": session_id or "",
                       "namespace": namespace, "served_by": served_by,
                       "prompt": _excerpt(prompt), "memories": reasons}, default=str)
    with contextlib.suppress(OSError):
        path = _path(home)
        if path.exists() and path.stat().st_size > MAX_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, (line + "\n").encode("utf-8"))
        finally:
            os.close(fd)


def record_request(home: Path, request: dict[str, Any], answer: dict[str, Any],
                   served_by: str) -> None:
    """``record_injection`` for a hook service request (op ``prompt``) and its answer."""
    if request.get("op") != "prompt":
        return
    session = request.get("session_id")
    record_injection(home, session_id=session if isinstance(session, str) else None,
                     namespace=str(request.get("namespace")),
                     prompt=str(request.get("prompt") or ""), answer=answer,
                     served_by=served_by)


def read_injections(home: Path, *, session_id: str | None = None,
                    namespace: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
    """The latest ``limit`` injections, oldest first, optionally of one session or
    namespace (the rotated file included). Malformed lines are skipped."""
    path = home.joinpath(*LOG_PARTS)
    found: list[dict[str, Any]] = []
    for part in (path.with_name(path.name + ".1"), path):
        try:
            lines = part.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            if session_id is not None and entry.get("session_id") != session_id:
                continue
            if namespace is not None and entry.get("namespace") != namespace:
                continue
            found.append(entry)
    return found[-limit:] if limit > 0 else found
