"""What was injected, and learning from it: the injection log, the warm prompt path that
writes it, the capture that reads replies against it, and the CLI command that shows it."""

from __future__ import annotations

import json
from pathlib import Path

from aide_memoire import Memory
from aide_memoire.hooks.feedback import UNUSED_AFTER, learn_from_replies, used
from aide_memoire.hooks.injections import (
    injection_reasons,
    read_injections,
    record_injection,
)
from aide_memoire.hooks.warm import hook_output, serve_prompt

from ..clirun import invoke
from .conftest import TOKEN

NS = "project:app-123456"
NOTE = ("pytest-asyncio 0.23 requires asyncio_mode = auto in pytest.ini; otherwise async "
        "tests are silently skipped")
PROMPT = "Why does pytest-asyncio skip my async tests? Is asyncio_mode set right?"


def test_the_log_keeps_an_excerpt_without_private_text_or_secrets(home: Path) -> None:
    prompt = f"deploy with {TOKEN} <private>my pin 4321</private> please " + "x" * 400
    record_injection(home, session_id="s1", namespace=NS, prompt=prompt,
                     answer={"ids": ["m1"], "reasons": [{"id": "m1", "cosine": 0.71}]},
                     served_by="mcp_tool")
    record_injection(home, session_id="s1", namespace=NS, prompt="nothing came back",
                     answer={"ids": []}, served_by="mcp_tool")
    (entry,) = read_injections(home)
    assert entry["memories"] == [{"id": "m1", "cosine": 0.71}]
    assert TOKEN not in entry["prompt"] and "4321" not in entry["prompt"]
    assert "[redacted:" in entry["prompt"] and len(entry["prompt"]) <= 240
    raw = home.joinpath("hooks", "injections.jsonl")
    assert raw.stat().st_mode & 0o777 == 0o600
    assert read_injections(home, session_id="other") == []


def test_reasons_of_an_injection_without_gate_reasons_are_its_ids() -> None:
    assert injection_reasons({"ids": ["a", "b"]}) == [{"id": "a"}, {"id": "b"}]


def test_the_warm_path_injects_once_per_session_and_logs_it(kmemory: Memory) -> None:
    kmemory.store(NOTE, namespace=NS)
    first = serve_prompt(kmemory, NS, PROMPT, "s1")
    assert "asyncio_mode" in first["text"]
    assert serve_prompt(kmemory, NS, PROMPT, "s1")["text"] == ""  # not twice a session
    assert "asyncio_mode" in serve_prompt(kmemory, NS, PROMPT, "s2")["text"]
    entries = read_injections(kmemory.settings.home)
    assert [e["session_id"] for e in entries] == ["s1", "s2"]
    assert {e["served_by"] for e in entries} == {"mcp_tool"}
    shaped = json.loads(hook_output(first["text"]))
    assert shaped["hookSpecificOutput"] == {"hookEventName": "UserPromptSubmit",
                                            "additionalContext": first["text"]}
    assert hook_output("") == "{}"


def test_a_reply_that_uses_the_memory_counts_as_helpful(kmemory: Memory) -> None:
    memory_id = kmemory.store(NOTE, namespace=NS)
    serve_prompt(kmemory, NS, PROMPT, "s1")
    reply = ("Your async tests are skipped because pytest-asyncio 0.23 needs "
             "asyncio_mode = auto in pytest.ini; add it and they will run.")
    assert used(memory_id, NOTE, reply)
    assert learn_from_replies(kmemory, NS, "s1", [reply]) == {"used": 1, "unused": 0}
    assert kmemory.get(memory_id, namespace=NS).utility > 0
    # The same session's later replies do not count it again.
    assert learn_from_replies(kmemory, NS, "s1", [reply]) == {"used": 0, "unused": 0}


def test_a_reply_that_ignores_it_is_not_a_use() -> None:
    assert not used("m1", NOTE, "Sure, here is a haiku about autumn leaves.")
    assert used("0123abcd", NOTE, "As memory 0123abcd says, set the mode.")  # its id


def test_a_memory_never_used_over_many_injections_loses_weight(kmemory: Memory) -> None:
    memory_id = kmemory.store(NOTE, namespace=NS)
    for n in range(UNUSED_AFTER):
        session = f"s{n}"
        serve_prompt(kmemory, NS, PROMPT, session)
        counts = learn_from_replies(kmemory, NS, session, ["Here is a haiku instead."])
        assert counts["unused"] == (1 if n == UNUSED_AFTER - 1 else 0), (n, counts)
    assert kmemory.get(memory_id, namespace=NS).utility < 0


def test_the_cli_lists_what_each_prompt_received(home: Path, kmemory: Memory) -> None:
    memory_id = kmemory.store(NOTE, namespace=NS)
    serve_prompt(kmemory, NS, PROMPT, "s1")
    done = invoke(home, "injections", "--json", check=True)
    entries = json.loads(done.stdout)["injections"]
    assert entries[0]["session_id"] == "s1" and entries[0]["memories"][0]["id"] == memory_id
    text = invoke(home, "injections", "--session", "s1", check=True).stdout
    assert "s1" in text and memory_id in text and "pytest-asyncio" in text
    assert "nothing" in invoke(home, "injections", "--session", "nope", check=True).stdout
