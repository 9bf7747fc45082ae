"""The Injected page: what each prompt received and why, per session, with explicit
feedback; behind the same guard as every page (session, Host, Origin, CSRF)."""

from __future__ import annotations

from starlette.testclient import TestClient

from aide_memoire import Memory
from aide_memoire.hooks.warm import serve_prompt

from .conftest import NS, csrf_of, sign_in

NOTE = "The nightly backup of the orders database runs at 02:30 UTC from the cron box."
PROMPT = "When does the nightly backup of the orders database run?"


def _injected(store: Memory, session: str = "sess-1") -> str:
    memory_id = store.store(NOTE, namespace=NS)
    assert serve_prompt(store, NS, PROMPT, session)["ids"] == [memory_id]
    return memory_id


def test_the_page_lists_each_prompt_and_what_it_received(client: TestClient,
                                                         store: Memory) -> None:
    memory_id = _injected(store)
    serve_prompt(store, NS, "When does the nightly backup run, again?", "sess-2")  # once only
    sign_in(client)
    page = client.get("/ui/injected")
    assert page.status_code == 200
    assert PROMPT in page.text and memory_id in page.text and "sess-1" in page.text
    assert "mcp_tool" in page.text
    one = client.get("/ui/injected?session=sess-1")
    assert memory_id in one.text
    assert "Nothing injected yet" in client.get("/ui/injected?session=other").text


def test_feedback_from_the_page_changes_the_memorys_weight(client: TestClient,
                                                           store: Memory) -> None:
    memory_id = _injected(store)
    sign_in(client)
    token = csrf_of(client.get("/ui/injected").text)
    form = {"csrf": token, "id": memory_id, "namespace": NS, "outcome": "unhelpful",
            "back": "/ui/injected?session=sess-1"}
    done = client.post("/ui/injected/feedback", data=form, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"].startswith("/ui/injected")
    assert store.get(memory_id, namespace=NS).utility < 0
    actions = [(e.actor, e.action) for e in store.audit_history(memory_id)]
    assert ("web", "lifecycle.feedback") in actions
    # A redirect only ever goes back to this page.
    away = client.post("/ui/injected/feedback", data={**form, "back": "https://evil.example/"},
                       follow_redirects=False)
    assert away.headers["location"].startswith("/ui/injected")
    wrong = client.post("/ui/injected/feedback", data={**form, "outcome": "drop"},
                        follow_redirects=False)
    assert "error=" in wrong.headers["location"]


def test_the_page_keeps_the_guard(client: TestClient, store: Memory) -> None:
    memory_id = _injected(store)
    assert client.get("/ui/injected").status_code == 401  # no session
    sign_in(client)
    form = {"id": memory_id, "namespace": NS, "outcome": "helpful"}
    assert client.post("/ui/injected/feedback", data=form).status_code == 403  # no CSRF
    token = csrf_of(client.get("/ui/injected").text)
    foreign = client.post("/ui/injected/feedback", data={**form, "csrf": token},
                          headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403
    assert client.get("/ui/injected", headers={"Host": "evil.example:8765"}).status_code == 403
    assert store.get(memory_id, namespace=NS).utility == 0
