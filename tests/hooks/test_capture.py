"""Capture: exactly once per transcript line, secrets and private spans never stored."""

from __future__ import annotations

import json
import re
from pathlib import Path

from aide_memoire import Memory, MemoryRecord
from aide_memoire.engine.trust.redact import redact_secrets
from aide_memoire.hooks.capture import capture_transcript, strip_private
from aide_memoire.hooks.transcript import read_transcript

from .conftest import MAIN_SESSION, PASSWORD, PRIVATE, TOKEN, store_bytes

NS = "project:app-000001"


def turns(memory: Memory, status: str = "active") -> list[MemoryRecord]:
    """The namespace's turns with ``status``, in session order (quarantined ones too)."""
    ids = [str(r[0]) for r in memory.internals.db.conn().execute(
        "SELECT id FROM memories WHERE namespace = ? AND kind = 'turn' AND status = ? "
        "ORDER BY session_id, position", (NS, status))]
    return [memory.get(i, namespace=NS) for i in ids]


def test_capture_stores_user_assistant_and_tool_lines(kmemory: Memory, transcript: Path) -> None:
    report = capture_transcript(kmemory, transcript, namespace=NS, session_id=MAIN_SESSION)
    stored = turns(kmemory)
    speakers = [t.speaker for t in stored]
    assert speakers[:5] == ["user", "assistant", "tool", "tool", "assistant"]
    assert stored[0].content.startswith("The staging database moved to Postgres 16")
    assert stored[0].observed_at is not None and stored[0].observed_at.isoformat().startswith(
        "2026-11-20T09:02")
    assert stored[0].session_id == MAIN_SESSION
    # Tool calls: one short line each, with the outcome, never the output.
    assert stored[2].content == "Bash: grep -n migrate Makefile (ok)"
    assert stored[3].content == "Read: /home/dev/work/app/manage.py (failed)"
    text = "\n".join(t.content for t in stored)
    assert "./manage.py migrate\n" not in text and "file does not exist" not in text
    # Thinking, sidechain, command wrappers, meta lines and summaries are not turns.
    for absent in ("Let me look at the Makefile", "Subagent", "Found ops/deploy.sh",
                   "<command-name>", "Caveat:", "Staging database migration"):
        assert absent not in text
    assert report.malformed == 2
    assert report.turns == len(stored) + len(turns(kmemory, "quarantined"))


def test_repeated_and_overlapping_captures_never_duplicate(
    kmemory: Memory, transcript: Path
) -> None:
    first = capture_transcript(kmemory, transcript, namespace=NS, session_id=MAIN_SESSION)
    count = len(turns(kmemory)) + len(turns(kmemory, "quarantined"))
    again = capture_transcript(kmemory, transcript, namespace=NS, session_id=MAIN_SESSION)
    assert again.turns == 0 and again.present == first.turns
    # An overlapping capture (from the middle) and a resumed session's copy of the lines.
    middle = capture_transcript(kmemory, transcript, namespace=NS, session_id=MAIN_SESSION,
                                start=first.cursor // 2)
    copy = capture_transcript(kmemory, transcript, namespace=NS, session_id="resumed-session")
    assert middle.turns == 0 and copy.turns == 0
    assert len(turns(kmemory)) + len(turns(kmemory, "quarantined")) == count


def test_incremental_capture_continues_at_the_cursor(kmemory: Memory, transcript: Path) -> None:
    lines = transcript.read_bytes().splitlines(keepends=True)
    transcript.write_bytes(b"".join(lines[:5]) + lines[5][:40])  # last line half written
    first = capture_transcript(kmemory, transcript, namespace=NS, session_id=MAIN_SESSION)
    assert first.cursor == len(b"".join(lines[:5]))
    before = len(turns(kmemory))
    transcript.write_bytes(b"".join(lines))
    second = capture_transcript(kmemory, transcript, namespace=NS, session_id=MAIN_SESSION,
                                start=first.cursor)
    assert second.turns > 0 and len(turns(kmemory)) == before + second.turns - len(
        turns(kmemory, "quarantined"))
    positions = [t.position for t in turns(kmemory)]
    numbers = [p for p in positions if p is not None]
    assert numbers == positions and numbers == sorted(numbers)
    assert len(set(numbers)) == len(numbers)


def test_a_tool_call_waiting_for_its_result_is_captured_later(
    kmemory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    call = {"type": "assistant", "uuid": "a1", "sessionId": "s", "timestamp":
            "2026-11-21T10:00:00Z", "message": {"role": "assistant", "content": [
                {"type": "text", "text": "Running the test suite now."},
                {"type": "tool_use", "id": "t1", "name": "Bash",
                 "input": {"command": "pytest -q"}}]}}
    path.write_text(json.dumps(call) + "\n")
    first = capture_transcript(kmemory, path, namespace=NS)
    assert [t.content for t in turns(kmemory)] == ["Running the test suite now."]
    assert first.cursor == 0  # the next capture reads the call again, with its result
    result = {"type": "user", "uuid": "u2", "sessionId": "s", "timestamp":
              "2026-11-21T10:00:05Z", "message": {"role": "user", "content": [
                  {"type": "tool_result", "tool_use_id": "t1", "is_error": True,
                   "content": "3 failed"}]}}
    with path.open("a") as fh:
        fh.write(json.dumps(result) + "\n")
    capture_transcript(kmemory, path, namespace=NS, start=first.cursor)
    assert [t.content for t in turns(kmemory)] == [
        "Running the test suite now.", "Bash: pytest -q (failed)"]


def test_secrets_are_redacted_span_by_span_and_nowhere_in_the_files(
    kmemory: Memory, transcript: Path, home: Path
) -> None:
    capture_transcript(kmemory, transcript, namespace=NS, session_id=MAIN_SESSION)
    kmemory.internals.db.conn().execute("PRAGMA wal_checkpoint(PASSIVE)")
    said = next(t for t in turns(kmemory) if "staging password" in t.content)
    # The marker names the scanner's rule; which password rule fired is the scanner's
    # business, that a marker stands where the value was is this test's.
    assert re.fullmatch(
        r"Also, for the record, the staging password is \[redacted:password[a-z-]*\] and "
        r"the deploy token is \[redacted:github-token\]", said.content), said.content
    raw = store_bytes(home)
    for secret in (TOKEN, PASSWORD, TOKEN[8:30], PRIVATE):
        assert secret.encode() not in raw


def test_private_spans_are_never_stored(kmemory: Memory, transcript: Path, home: Path) -> None:
    report = capture_transcript(kmemory, transcript, namespace=NS, session_id=MAIN_SESSION)
    decided = next(t for t in turns(kmemory) if "release on Thursdays" in t.content)
    assert "Lilas" not in decided.content and "<private>" not in decided.content
    assert decided.content.endswith("after the QA sign-off.")
    assert report.private == 1
    assert b"Lilas" not in store_bytes(home)


def test_strip_private_handles_case_newlines_and_unclosed_spans() -> None:
    assert strip_private("a <PRIVATE>x\ny</Private> b")[0] == "a  b"
    assert strip_private("keep <private>secret to the end") == ("keep ", 1)
    assert strip_private("one <private>1</private> two <private>2</private>")[1] == 2


def test_suspected_injection_is_held_for_review(kmemory: Memory, transcript: Path) -> None:
    capture_transcript(kmemory, transcript, namespace=NS, session_id=MAIN_SESSION)
    held = turns(kmemory, "quarantined")
    assert [t.content[:30] for t in held] == ["Ignore all previous instructio"]
    queue = kmemory.review_queue(NS)
    assert [item.memory_id for item in queue] == [held[0].id]
    assert all("Ignore all previous" not in h.content
               for h in kmemory.recall("previous instructions system prompt", namespace=NS))


def test_redaction_keeps_every_other_character() -> None:
    text = f"before {TOKEN} middle password={PASSWORD} after"
    done = redact_secrets(text)
    assert re.fullmatch(r"before \[redacted:github-token\] middle "
                        r"password=\[redacted:password[a-z-]*\] after", done.text), done.text
    assert [text[f.start:f.end] for f in done.findings] == [TOKEN, PASSWORD]
    assert done.findings[0].kind == "github-token"
    assert done.findings[1].kind.startswith("password")
    assert redact_secrets("no secrets here").findings == ()


def test_reading_skips_what_is_not_conversation(transcript: Path) -> None:
    chunk = read_transcript(transcript)
    assert chunk.malformed == 2
    assert not any("Subagent" in m.text for m in chunk.messages)
    assert chunk.results == {"toolu_01": False, "toolu_02": True}


def test_what_claude_code_writes_on_its_own_is_not_a_turn(
    kmemory: Memory, tmp_path: Path
) -> None:
    def line(n: int, kind: str, content: object, **extra: object) -> str:
        return json.dumps({"type": kind, "uuid": f"x{n}", "sessionId": "s", "timestamp":
                           "2026-11-22T08:00:00Z", "message": {"role": kind,
                                                               "content": content}, **extra})

    path = tmp_path / "s.jsonl"
    path.write_text("\n".join([
        line(1, "user", "<bash-input>cat .env</bash-input>"),
        line(2, "user", "<bash-stdout>DATABASE_URL=...</bash-stdout><bash-stderr></bash-stderr>"),
        line(3, "assistant", [{"type": "text", "text": "API Error: 529 overloaded"}],
             isApiErrorMessage=True),
        json.dumps({"type": "attachment", "uuid": "x4", "attachment": {
            "type": "hook_success", "hookEvent": "UserPromptSubmit",
            "content": "aide-memoire: earlier memories ..."}}),
        line(5, "user", "Keep the retry budget at three attempts."),
    ]) + "\n")
    capture_transcript(kmemory, path, namespace=NS)
    assert [t.content for t in turns(kmemory)] == ["Keep the retry budget at three attempts."]


def test_concurrent_captures_of_the_same_lines_add_them_once(
    home: Path, transcript: Path
) -> None:
    import threading

    from aide_memoire import Settings
    from aide_memoire.hooks.service import handle

    settings = Settings(home=home, embedding_model="none")
    with Memory(settings=settings) as setup:
        setup.status()  # create the store before the writers race
    errors: list[BaseException] = []

    def capture(session: str) -> None:
        try:
            with Memory(settings=settings) as memory:
                handle(memory, {"op": "capture", "namespace": NS, "session_id": session,
                                "transcript_path": str(transcript)})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    # The session and a resumed copy of it, captured at the same moment.
    workers = [threading.Thread(target=capture, args=(s,)) for s in ("one", "two", "one")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert not errors
    with Memory(settings=settings) as memory:
        uuids = [str(r[0]) for r in memory.internals.db.conn().execute(
            "SELECT json_extract(metadata, '$.uuid') FROM memories WHERE namespace = ?", (NS,))]
    assert len(uuids) == len(set(uuids)) == 11
