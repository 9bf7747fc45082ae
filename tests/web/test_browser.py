"""The web page in a real headless Chromium, served by a real daemon that
``aide-memoire ui --no-open`` started. Saves a screenshot of each page to docs/images/."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.mcp.http import read_discovery

from .cdp import CHROMIUM, Browser
from .conftest import INJECTION, NS

pytestmark = [pytest.mark.slow]

# The screenshots docs/web.md shows: written there only when asked
# (AIDE_MEMOIRE_SCREENSHOTS=docs/images), so that a test run leaves the tree clean.
IMAGES = Path(os.environ.get("AIDE_MEMOIRE_SCREENSHOTS") or tempfile.mkdtemp(prefix="web-shots-"))


@pytest.fixture(autouse=True)
def _chromium() -> None:
    # Not a skip: make test installs it, and a browser test that did not run is a failure.
    if not CHROMIUM.exists():
        pytest.fail(f"no browser at {CHROMIUM}: run `make test` (it installs Debian's chromium)")
FACTS = [
    "Maria moved to Lisbon in March and works with Omar on the billing service.",
    "Omar and Chen run the Tokyo office; Chen prefers Rust for new services.",
    "The billing service retries failed card payments three times.",
    "The staging database runs on port 5433; Maria owns its backups.",
]


def _memory(home: Path) -> Memory:
    settings = Settings.from_env(home=home).model_copy(update={"embedding_model": "none"})
    return Memory(settings=settings)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    home = tmp_path_factory.mktemp("web") / "home"
    with _memory(home) as memory:
        ids = [memory.store(text, namespace=NS, tags=["team"]) for text in FACTS]
        memory.store_conversation(
            [{"speaker": "user", "content": "Where do the deploy scripts live?"},
             {"speaker": "assistant", "content": "In ops/deploy.sh, run from the repo root."}],
            namespace=NS, session_id="session-1")
        memory.store(INJECTION, namespace=NS)
        wrong = memory.store("The office closes at noon on Fridays.", namespace=NS)
        memory.feedback(wrong, "wrong", namespace=NS)
        memory.maintain(NS, apply=True)  # stages a demote proposal for the wrong belief
        assert {i.kind for i in memory.review_queue(NS)} == {"quarantine", "demote"}
    env = {**os.environ, "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"}
    done = subprocess.run(
        [sys.executable, "-m", "aide_memoire.cli.main", "--home", str(home), "ui", "--no-open"],
        env=env, capture_output=True, text=True, timeout=120)
    info = read_discovery(home)
    try:
        assert done.returncode == 0, done.stderr
        url = re.search(r"(http://127\.0\.0\.1:\d+/ui/login\?ticket=\S+)", done.stderr)
        assert url, done.stderr
        assert info is not None
        browser = Browser(tmp_path_factory.mktemp("chromium"))
        try:
            yield {"home": home, "url": url.group(1), "port": info["port"], "ids": ids,
                   "wrong": wrong, "browser": browser}
        finally:
            browser.close()
    finally:
        # Whatever failed above, the daemon `ui` started must not outlive the tests.
        if info is not None:
            _stop(int(info["pid"]))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    # Not our child (ui detached it), so it is reaped by init; a zombie is gone already.
    return not (status.exists() and "\nState:\tZ" in status.read_text())


def _stop(pid: int) -> None:
    """SIGTERM the daemon and wait until the process is gone; SIGKILL it past 20 s."""
    for sig, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not _alive(pid):
            return
    raise AssertionError(f"the daemon {pid} survived SIGKILL")


def _base(site: dict[str, object]) -> str:
    return f"http://127.0.0.1:{site['port']}/ui"


def test_open_with_the_token(site: dict[str, object]) -> None:
    b: Browser = site["browser"]  # type: ignore[assignment]
    b.goto(str(site["url"]))
    assert b.js("location.pathname") == "/ui/"
    assert "ticket" not in b.js("location.href")
    assert b.js("document.cookie") == ""  # HTTP-only: scripts cannot read it
    assert NS in b.js("document.body.innerText")
    b.screenshot(IMAGES / "web-memories.png")
    # The link worked once: a second visit is refused.
    b.goto(str(site["url"]))
    assert "used or expired" in b.js("document.body.innerText")


def test_ui_reuses_the_running_daemon(site: dict[str, object]) -> None:
    env = {**os.environ, "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"}
    again = subprocess.run(
        [sys.executable, "-m", "aide_memoire.cli.main", "--home", str(site["home"]), "ui",
         "--no-open"], env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "starting the daemon" not in again.stderr
    url = re.search(r"(http://127\.0\.0\.1:(\d+)/ui/login\?ticket=\S+)", again.stderr)
    assert url and int(url.group(2)) == site["port"] and url.group(1) != site["url"]
    b: Browser = site["browser"]  # type: ignore[assignment]
    b.goto(url.group(1))
    assert b.js("location.pathname") == "/ui/"


def test_search_finds_a_stored_memory(site: dict[str, object]) -> None:
    b: Browser = site["browser"]  # type: ignore[assignment]
    b.goto(f"{_base(site)}/?namespace={NS}")
    b.js("document.querySelector('#f-q').value = 'staging database port'")
    b.submit("document.querySelector('form.filters button')")
    text = b.js("document.body.innerText")
    assert "Search results" in text and "5433" in text
    assert "bm25 #1" in text  # the stage that found it, and its rank
    b.screenshot(IMAGES / "web-search.png")
    b.submit("document.querySelector('td a[href^=\"/ui/m/\"]')")
    assert "5433" in b.js("document.querySelector('figure.held pre').innerText")
    b.screenshot(IMAGES / "web-memory.png")


def test_held_script_is_inert_and_quarantine_approved(site: dict[str, object]) -> None:
    b: Browser = site["browser"]  # type: ignore[assignment]
    b.goto(f"{_base(site)}/review")
    assert b.js("typeof window.__pwned") == "undefined"
    assert "<script>window.__pwned = 1</script>" in b.js("document.body.innerText")
    assert b.js("document.querySelectorAll('main script').length") == 0
    b.screenshot(IMAGES / "web-review.png")
    b.submit("[...document.querySelectorAll('article')].find(a => a.querySelector('h3')"
             ".innerText.startsWith('quarantine')).querySelector('button')")
    assert "approved quarantine item" in b.js("document.body.innerText")
    with _memory(site["home"]) as memory:  # type: ignore[arg-type]
        hits = memory.recall("previous instructions obey", namespace=NS)
        assert any(h.content == INJECTION for h in hits)
        assert memory.audit_history(hits[0].id)[-1].actor == "web"
    b.goto(f"{_base(site)}/m/{NS}/{hits[0].id}")
    assert b.js("typeof window.__pwned") == "undefined"


def test_rejected_proposal_changes_nothing(site: dict[str, object]) -> None:
    b: Browser = site["browser"]  # type: ignore[assignment]
    with _memory(site["home"]) as memory:  # type: ignore[arg-type]
        before = memory.get(str(site["wrong"]), namespace=NS)
    b.goto(f"{_base(site)}/review")
    b.submit("[...document.querySelectorAll('article')].find(a => a.querySelector('h3')"
             ".innerText.startsWith('demote')).querySelector('form.danger button')")
    assert "rejected demote item" in b.js("document.body.innerText")
    with _memory(site["home"]) as memory:  # type: ignore[arg-type]
        after = memory.get(str(site["wrong"]), namespace=NS)
        assert after.status == "active" and after.model_dump() == before.model_dump()
        (item,) = memory.review_queue(NS, status="rejected")
        assert item.decided_by == "web"


def test_forget_removes_a_memory(site: dict[str, object]) -> None:
    b: Browser = site["browser"]  # type: ignore[assignment]
    target = site["ids"][2]  # type: ignore[index]
    b.goto(f"{_base(site)}/m/{NS}/{target}/forget")
    assert "would delete 1 memory" in b.js("document.body.innerText")
    b.screenshot(IMAGES / "web-forget.png")
    b.submit("document.querySelector('form.danger button')")
    assert f"forgot {target}" in b.js("document.body.innerText")
    with _memory(site["home"]) as memory:  # type: ignore[arg-type]
        assert all(h.id != target for h in memory.recall("billing retries card", namespace=NS))
        assert target not in {r.id for r in memory.search(namespace=NS, include_archived=True)}


def test_other_pages(site: dict[str, object]) -> None:
    b: Browser = site["browser"]  # type: ignore[assignment]
    b.goto(f"{_base(site)}/timeline?namespace={NS}")
    assert "session-1" in b.js("document.body.innerText")
    b.screenshot(IMAGES / "web-timeline.png")
    b.submit("document.querySelector('a[href*=\"/ui/session/\"]')")
    assert "ops/deploy.sh" in b.js("document.body.innerText")
    b.screenshot(IMAGES / "web-session.png")
    b.goto(f"{_base(site)}/health")
    b.submit("[...document.querySelectorAll('form button')].find(x => x.innerText === "
             "'Verify audit log')")
    deadline = time.monotonic() + 30  # the check runs in the background; the page refreshes
    while "Audit log: intact" not in b.js("document.body.innerText"):
        assert time.monotonic() < deadline, b.js("document.body.innerText")
        time.sleep(0.5)
    b.screenshot(IMAGES / "web-health.png")
    b.goto(f"{_base(site)}/entities?namespace={NS}&name=maria")
    assert b.js("document.querySelectorAll('svg.graph circle').length") >= 2
    b.screenshot(IMAGES / "web-entities.png")


def test_refusals_in_the_browser_and_on_the_wire(site: dict[str, object]) -> None:
    b: Browser = site["browser"]  # type: ignore[assignment]
    b.goto(f"{_base(site)}/health")
    # A form the page did not make (no CSRF field) is refused...
    b.js("(() => { const f = document.createElement('form'); f.method = 'post'; "
         "f.action = '/ui/health/snapshot'; document.body.append(f); f.id = 'forged'; })()")
    b.submit("{ click: () => document.getElementById('forged').submit() }")
    assert "CSRF" in b.js("document.body.innerText")
    request = urllib.request.Request(f"{_base(site)}/", headers={"Origin": "http://evil.example"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403
    refused.value.close()  # it holds the response's socket until closed
    with _memory(site["home"]) as memory:  # type: ignore[arg-type]
        assert memory.snapshots() == []  # the refused POST changed nothing
    # ...and so is every page once the session cookie is gone.
    b.page("Network.clearBrowserCookies")
    b.goto(f"{_base(site)}/")
    assert "not signed in" in b.js("document.body.innerText")


def test_a_daemon_ui_started_is_gone_once_stopped(tmp_path: Path) -> None:
    """What the fixture's teardown relies on: the daemon `ui` detaches is found by its
    discovery file and is no longer running (not merely unannounced) after _stop."""
    home = tmp_path / "home"
    _memory(home).close()
    env = {**os.environ, "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"}
    done = subprocess.run(
        [sys.executable, "-m", "aide_memoire.cli.main", "--home", str(home), "ui", "--no-open"],
        env=env, capture_output=True, text=True, timeout=120)
    info = read_discovery(home)
    assert info is not None, done.stderr
    pid = int(info["pid"])
    try:
        assert _alive(pid)
    finally:
        _stop(pid)
    assert not _alive(pid)
    left = []
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            if str(home).encode() in path.read_bytes():
                left.append(path.read_bytes())
    assert left == [], left
