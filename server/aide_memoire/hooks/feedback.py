"""Learning from what the prompt hook injected: the reply tells whether it was used.

At capture, each assistant reply of a session is read against the memories injected
into that session's prompts (the injection log, injections.py). A memory counts as used
when the reply names its id, or holds most of its content words (at least
``USED_MIN_WORDS`` of them, and ``USED_SHARE`` of them counting at most ``WORDS_CAP``,
so a long memory is not held to every word): that is recorded as ``helpful``
feedback, which lifecycle scoring blends into recall (engine/services/lifecycle.py).
A memory injected into ``UNUSED_AFTER`` prompts without being used once since its last
judgement gets one ``unhelpful``: it loses weight slowly, and a later use outweighs it.

The counts live in ``<home>/hooks/usage.json`` (per namespace and memory id; small, and
under a lock, so two captures at once never lose each other's counts).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.core.errors import AideMemoireError
from ..engine.core.text import query_terms
from .injections import read_injections

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory

__all__ = ["USED_SHARE", "learn_from_replies", "used"]

USED_MIN_WORDS = 3
USED_SHARE = 0.6
WORDS_CAP = 8
UNUSED_AFTER = 5
USAGE_PARTS = ("hooks", "usage.json")

try:
    import fcntl
except ImportError:  # Windows: a lost count only delays a judgement
    fcntl = None  # type: ignore[assignment]


def _words(text: str) -> set[str]:
    """Content words (stop words out; short ones only if they hold a digit)."""
    return {w.lower() for w in query_terms(text) if len(w) > 3 or any(c.isdigit() for c in w)}


def used(memory_id: str, content: str, reply: str) -> bool:
    """Whether ``reply`` uses the memory: names its id, or holds most of its words (of a
    long memory, at least USED_SHARE of WORDS_CAP of them)."""
    if memory_id and memory_id in reply:
        return True
    words = _words(content)
    if len(words) < USED_MIN_WORDS:
        return False
    found = len(words & _words(reply))
    return found >= USED_MIN_WORDS and found / min(len(words), WORDS_CAP) >= USED_SHARE


@contextlib.contextmanager
def _usage(home: Path) -> Iterator[dict[str, Any]]:
    path = home.joinpath(*USAGE_PARTS)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        data = data if isinstance(data, dict) else {}
        yield data
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                       encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, path)
    finally:
        os.close(fd)


def _feedback(memory: Memory, memory_id: str, outcome: str, namespace: str) -> bool:
    try:
        memory.feedback(memory_id, outcome, namespace=namespace)
    except AideMemoireError:  # forgotten since it was injected: nothing to score
        return False
    return True


def learn_from_replies(memory: Memory, namespace: str, session_id: str,
                       replies: Iterable[str]) -> dict[str, int]:
    """Score the memories injected into ``session_id`` against its new ``replies``.
    Returns how many were found used and how many were marked unhelpful."""
    text = "\n".join(replies)
    home = memory.settings.home
    injected = read_injections(home, session_id=session_id, namespace=namespace, limit=0)
    if not text.strip() or not injected:
        return {"used": 0, "unused": 0}
    ids = list(dict.fromkeys(m["id"] for entry in injected for m in entry.get("memories", [])
                             if isinstance(m, dict) and isinstance(m.get("id"), str)))
    counts = {"used": 0, "unused": 0}
    with _usage(home) as usage:
        space = usage.setdefault(namespace, {})
        for memory_id in ids:
            record = space.setdefault(memory_id, {"seen": {}, "credited": [], "since": 0})
            try:
                content = memory.get(memory_id, namespace=namespace).content
            except AideMemoireError:
                continue
            prompts = sum(1 for entry in injected for m in entry.get("memories", [])
                          if isinstance(m, dict) and m.get("id") == memory_id)
            seen = record["seen"]
            record["since"] += max(0, prompts - int(seen.get(session_id, 0)))
            seen[session_id] = prompts
            for old in list(seen)[:-50]:  # the latest sessions are enough to count
                del seen[old]
            if session_id in record["credited"]:
                continue  # one helpful per session, however many replies use it
            if used(memory_id, content, text):
                if _feedback(memory, memory_id, "helpful", namespace):
                    record["credited"] = [*record["credited"][-50:], session_id]
                    record["since"] = 0
                    counts["used"] += 1
            elif (record["since"] >= UNUSED_AFTER
                  and _feedback(memory, memory_id, "unhelpful", namespace)):
                record["since"] = 0
                counts["unused"] += 1
    return counts
