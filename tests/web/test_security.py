"""The guard's rules, in process: ticket, cookie, Host, Origin, CSRF; held text inert."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from aide_memoire import Memory

from .conftest import BEARER, INJECTION, NS, csrf_of, sign_in


def test_pages_need_a_session(client: TestClient) -> None:
    for path in ("/ui/", "/ui/review", "/ui/health", "/ui/entities", "/ui/timeline"):
        answer = client.get(path)
        assert answer.status_code == 401 and "aide-memoire ui" in answer.text


def test_ticket_needs_the_bearer_token_and_works_once(client: TestClient) -> None:
    assert client.post("/ui/_ticket").status_code == 401
    assert client.post("/ui/_ticket", headers={"Authorization": "Bearer nope"}).status_code == 401
    ticket = client.post("/ui/_ticket", headers={"Authorization": f"Bearer {BEARER}"}).text.strip()
    first = client.get(f"/ui/login?ticket={ticket}", follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/ui/"
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/ui" in cookie
    assert "ticket" not in first.headers["location"]
    client.cookies.clear()
    again = client.get(f"/ui/login?ticket={ticket}", follow_redirects=False)
    assert again.status_code == 401
    assert client.get("/ui/").status_code == 401


def test_foreign_host_and_origin_are_refused(client: TestClient) -> None:
    sign_in(client)
    assert client.get("/ui/").status_code == 200
    assert client.get("/ui/", headers={"Host": "evil.example:8765"}).status_code == 403
    assert client.get("/ui/", headers={"Host": "127.0.0.1:9999"}).status_code == 403
    foreign = client.get("/ui/", headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403 and "Origin" in foreign.text
    assert client.get("/ui/", headers={"Origin": "http://127.0.0.1:8765"}).status_code == 200


@pytest.mark.parametrize("host", ["localhost:1.evil.example", "127.0.0.1:8765.evil.example",
                                  "localhost:8765@evil.example", "localhost:8765:1", ""])
def test_a_host_with_a_suffix_is_refused(client: TestClient, host: str) -> None:
    sign_in(client)
    assert client.get("/ui/", headers={"Host": host}).status_code == 403


def test_the_ticket_takes_any_case_of_bearer_and_one_authorization_only(
    client: TestClient,
) -> None:
    assert client.post("/ui/_ticket", headers={"Authorization": f"bearer {BEARER}"}
                       ).status_code == 200
    assert client.post("/ui/_ticket", headers={"Authorization": f"BEARER  {BEARER}"}
                       ).status_code == 200
    assert client.post("/ui/_ticket", headers={"Authorization": f"Basic {BEARER}"}
                       ).status_code == 401
    twice = [("Authorization", f"Bearer {'x' * 43}"), ("Authorization", f"Bearer {BEARER}")]
    answer = client.post("/ui/_ticket", headers=twice)
    assert answer.status_code == 400 and "exactly one Authorization" in answer.text


def test_changes_need_the_csrf_token(client: TestClient, store: Memory) -> None:
    memory_id = store.store("The staging database runs on port 5433.", namespace=NS)
    sign_in(client)
    page = client.get(f"/ui/m/{NS}/{memory_id}")
    token = csrf_of(page.text)
    action = f"/ui/m/{NS}/{memory_id}/forget"
    assert client.post(action, data={}).status_code == 403
    assert client.post(action, data={"csrf": token[:-1] + "x"}).status_code == 403
    assert store.get(memory_id, namespace=NS).id == memory_id  # still there
    done = client.post(action, data={"csrf": token}, follow_redirects=False)
    assert done.status_code == 303
    assert store.search(namespace=NS) == []
    events = store.audit_history(memory_id)
    assert "forget" in events[-1].action
    assert events[-1].actor == "web"


def test_edit_is_audited_as_web(client: TestClient, store: Memory) -> None:
    memory_id = store.store("Releases go out on Tuesdays.", namespace=NS)
    sign_in(client)
    token = csrf_of(client.get(f"/ui/m/{NS}/{memory_id}").text)
    client.post(f"/ui/m/{NS}/{memory_id}/edit",
                data={"csrf": token, "content": "Releases go out on Thursdays.", "tags": "ops",
                      "importance": "0.5"})
    record = store.get(memory_id, namespace=NS)
    assert record.content == "Releases go out on Thursdays." and record.tags == ["ops"]
    assert store.audit_history(memory_id)[-1].actor == "web"


def test_held_text_is_escaped_and_scripts_are_blocked(client: TestClient, store: Memory) -> None:
    store.store(INJECTION, namespace=NS)
    (item,) = store.review_queue(NS)
    sign_in(client)
    for path in ("/ui/review", f"/ui/m/{NS}/{item.memory_id}", f"/ui/?namespace={NS}"):
        answer = client.get(path)
        assert answer.status_code == 200
        assert "<script>window" not in answer.text
        assert "&lt;script&gt;window" in answer.text
        assert "may contain instructions" in answer.text
        assert "script-src 'self'" in answer.headers["content-security-policy"]


def test_web_imports_no_edge_and_the_engine_no_web() -> None:
    import ast
    from pathlib import Path

    import aide_memoire

    package = Path(aide_memoire.__file__).parent
    for path in (package / "web").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("mcp", "cli")), f"{path.name}: {node.module}"
    for path in (package / "engine").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            # ``from ..web import x`` names "web"; absolute imports name the package.
            assert not any(n == "web" or n.startswith(("web.", "aide_memoire.web"))
                           for n in names), f"{path.name}: {names}"
