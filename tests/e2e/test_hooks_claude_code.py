"""Memory that works without being asked, end to end: the real Claude Code CLI (`claude -p`)
with the plugin installed from this repository's marketplace, its hooks running the real
`aide-memoire hook <event>` on a real store, and a local stand-in for the Messages API
that records what Claude Code sends to the model.

Session 1 states facts (with a token and a <private> span) in one project; after it ends
the store holds its turns, once each, with the token and the private text gone; a later
session in that project sends the facts to the model; a session in another project and
an unrelated prompt get none of it.
"""

from __future__ import annotations

import re
import secrets
import string
from typing import Any

import pytest

from aide_memoire.engine.core.projects import project_namespace

from .conftest import World, wait_for

pytestmark = pytest.mark.slow

ALPHABET = string.ascii_letters + string.digits
# Rare words, so that only a recalled memory can bring them into a request.
FACT = ("For this project: the billing service writes every invoice into the quillfeather "
        "database, which listens on port 48213.")
QUESTION = "Which database does the billing service write invoices into, and on which port?"
UNRELATED = "What is the capital of Portugal?"


def _texts(value: Any) -> list[str]:
    """Every string inside a request body (system prompt, messages, blocks)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def _sent(bodies: list[dict[str, Any]]) -> str:
    return "\n".join(t for body in bodies for t in _texts(body.get("messages", [])) +
                     _texts(body.get("system", [])))


# The prompt hook is an mcp_tool hook: Claude Code labels the context it returns so.
PROMPT_HOOK = "UserPromptSubmit hook additional context:"


def _prompt_hook_context(bodies: list[dict[str, Any]]) -> list[str]:
    """What the UserPromptSubmit hook added. Claude Code puts each hook's output in the
    context under a label naming the event (the SessionStart briefing sits in the same
    block), so this is the text from that label to the next hook's label, if any."""
    found = []
    for text in (t for body in bodies for t in _texts(body.get("messages", []))):
        for part in text.split(PROMPT_HOOK)[1:]:
            found.append(re.split(r"\n\n\w+(?::\w+)? hook (?:success|additional context):",
                                  part)[0])
    return found


@pytest.fixture(scope="module")
def session_one(world: World) -> dict[str, Any]:
    token = "ghp_" + "".join(secrets.choice(ALPHABET) for _ in range(36))
    private = f"my locker code is {secrets.token_hex(6)}"
    shop = world.project("shop")
    prompt = f"{FACT} The deploy token is {token} <private>{private}</private> Thanks."
    world.session(prompt, shop)
    namespace = project_namespace(shop)

    def captured() -> list[dict[str, Any]]:
        rows = world.export(namespace)
        has_user = any(r["speaker"] == "user" and "quillfeather" in r["content"] for r in rows)
        has_reply = any(r["speaker"] != "user" and "Noted." in r["content"] for r in rows)
        return rows if has_user and has_reply and world.captures_done() else []

    rows = wait_for(captured, "session 1's turns in the store")
    return {"token": token, "private": private, "shop": shop, "namespace": namespace,
            "rows": rows}


def test_session_one_is_captured_once_per_turn(session_one: dict[str, Any]) -> None:
    rows = session_one["rows"]
    assert {r["kind"] for r in rows} == {"turn"}
    assert len({r["session_id"] for r in rows}) == 1
    user = [r for r in rows if r["speaker"] == "user" and "quillfeather" in r["content"]]
    # The Stop and SessionEnd hooks both read the whole transcript: still one row a turn.
    assert len(user) == 1, rows
    text = user[0]["content"]
    # The turn is kept around the removed token and private span.
    assert "port 48213" in text and "Thanks." in text
    assert "[redacted:" in text
    assert session_one["token"] not in text and session_one["private"] not in text


def test_token_and_private_text_are_in_no_store_file(world: World,
                                                     session_one: dict[str, Any]) -> None:
    files = [p for p in world.store.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert "memory.db" in names
    assert any(p.parent.name == "logs" for p in files), names  # the hooks' log is there too
    for secret in (session_one["token"], session_one["private"]):
        for path in files:  # db, -wal, -shm, logs, hook state
            assert secret.encode() not in path.read_bytes(), path
    assert world.captures_done()
    assert not list(world.tmp.glob("aide-memoire*"))  # no hook input left behind in TMPDIR


def test_a_later_session_in_the_project_sends_the_facts(world: World,
                                                        session_one: dict[str, Any]) -> None:
    bodies = world.session(QUESTION, session_one["shop"])
    assert "quillfeather" in _sent(bodies)
    added = _prompt_hook_context(bodies)
    assert any("quillfeather" in t and "48213" in t for t in added), added
    assert all(session_one["token"] not in t for t in added)


def test_another_project_gets_none_of_it(world: World, session_one: dict[str, Any]) -> None:
    garden = world.project("garden")
    bodies = world.session(QUESTION, garden)
    sent = _sent(bodies)
    assert "quillfeather" not in sent and "48213" not in sent
    assert _prompt_hook_context(bodies) == []
    # Its own turns are remembered, in its own project's namespace.
    namespace = project_namespace(garden)
    assert namespace != session_one["namespace"]
    rows = wait_for(lambda: world.captures_done() and world.export(namespace),
                    "the garden session's turns")
    assert any(r["speaker"] == "user" and QUESTION in r["content"] for r in rows), rows
    assert not any("quillfeather" in r["content"] for r in rows)


def test_an_unrelated_prompt_gets_no_memory(world: World, session_one: dict[str, Any]) -> None:
    bodies = world.session(UNRELATED, session_one["shop"])
    assert _prompt_hook_context(bodies) == []
