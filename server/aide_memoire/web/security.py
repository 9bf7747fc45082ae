"""The web page's guard: one-time sign-in tickets, session cookies, Host, Origin and CSRF.

- ``aide-memoire ui`` asks the daemon for a ticket (``POST /ui/_ticket`` with the
  daemon's bearer token) and opens ``/ui/login?ticket=...``. A ticket works once, for a
  few minutes, and becomes a session cookie (HTTP-only, SameSite=Strict, path ``/ui``);
  the answer redirects to a URL without it, so it stays out of history and screenshots.
- Host must be ``127.0.0.1`` or ``localhost`` with, optionally, this daemon's port and
  nothing else (a rebound DNS name is refused; parsing in headers.py) and an Origin,
  when sent, must be that same host: as for the MCP endpoint.
- Every POST carries the session's CSRF token in a hidden field, compared in constant
  time. Refusals are plain text: 401 without a session, 403 for the rest.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

from .headers import check_bearer, loopback_host, single_header

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["COOKIE", "PREFIX", "Guard", "Sessions"]

PREFIX = "/ui"
COOKIE = "aide_memoire_ui"
TICKET_TTL_S = 300.0
SESSION_TTL_S = 12 * 3600.0
MAX_SESSIONS = 32
MAX_FORM_BYTES = 1_000_000
# Nothing loads from elsewhere, nothing inline runs: held text that smuggles a <script>
# past the escaping would still be refused by the browser.
HEADERS = [
    (b"content-security-policy",
     b"default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "
     b"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    # not no-referrer: with it Chromium sends "Origin: null" on form posts.
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


@dataclass
class Session:
    csrf: str
    expires: float


@dataclass
class Sessions:
    """Tickets and sessions of one daemon, in memory: a restart signs everyone out."""

    tickets: dict[str, float] = field(default_factory=dict)
    sessions: dict[str, Session] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def new_ticket(self) -> str:
        ticket = secrets.token_urlsafe(32)
        with self.lock:
            now = time.monotonic()
            self.tickets = {t: exp for t, exp in self.tickets.items() if exp > now}
            self.tickets[ticket] = now + TICKET_TTL_S
        return ticket

    def redeem(self, ticket: str) -> tuple[str, Session] | None:
        """A new session for a valid ticket, which is spent either way."""
        with self.lock:
            expires = self.tickets.pop(ticket, None)
            now = time.monotonic()
            if expires is None or expires <= now:
                return None
            self.sessions = {k: s for k, s in self.sessions.items() if s.expires > now}
            while len(self.sessions) >= MAX_SESSIONS:
                self.sessions.pop(min(self.sessions, key=lambda k: self.sessions[k].expires))
            sid = secrets.token_urlsafe(32)
            session = Session(csrf=secrets.token_urlsafe(32), expires=now + SESSION_TTL_S)
            self.sessions[sid] = session
            return sid, session

    def lookup(self, sid: str) -> Session | None:
        with self.lock:
            # Compare every key in constant time: the lookup must not leak a prefix.
            found = None
            for key, session in self.sessions.items():
                if hmac.compare_digest(key.encode(), sid.encode()):
                    found = session
            if found is None or found.expires <= time.monotonic():
                return None
            return found


def _cookie(headers: dict[bytes, bytes]) -> str:
    for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value
    return ""


async def _plain(send: Send, status: int, text: str,
                 extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = (text + "\n").encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()), *HEADERS, *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """Pure ASGI guard in front of the page routes; sets ``scope['state']`` for them:
    ``csrf`` (the session's token) and, for a POST, ``form`` (the parsed fields)."""

    def __init__(self, app: ASGIApp, sessions: Sessions, bearer: str) -> None:
        self.app = app
        self.sessions = sessions
        self.bearer = bearer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        port = (scope.get("server") or ("", 0))[1]
        host = loopback_host(single_header(scope["headers"], b"host"), port)
        if host is None:
            await _plain(send, 403, "refused: the Host header must be 127.0.0.1 or localhost "
                         "with this daemon's port")
            return
        origin = headers.get(b"origin")
        if origin is not None and origin.decode("latin-1") != f"http://{host}":
            await _plain(send, 403, "refused: cross-origin request (Origin does not match)")
            return
        path, method = scope["path"], scope["method"]
        if path == f"{PREFIX}/_ticket":
            await self._ticket(scope, send)
            return
        if path == f"{PREFIX}/login":
            await self._login(scope, send)
            return
        if path.startswith(f"{PREFIX}/static/"):
            await self._send(scope, receive, send)
            return
        session = self.sessions.lookup(_cookie(headers))
        if session is None:
            await _plain(send, 401, "not signed in: run `aide-memoire ui` for a fresh link")
            return
        state = scope.setdefault("state", {})
        state["csrf"] = session.csrf
        if method == "POST":
            form = await _read_form(receive)
            if form is None:
                await _plain(send, 413, "refused: form too large")
                return
            given = form.get("csrf", "")
            if not hmac.compare_digest(given.encode(), session.csrf.encode()):
                await _plain(send, 403, "refused: missing or wrong CSRF token; reload the page")
                return
            state["form"] = form
        elif method not in ("GET", "HEAD"):
            await _plain(send, 405, "method not allowed")
            return
        await self._send(scope, receive, send)

    async def _send(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)
        await self.app(scope, receive, with_headers)

    async def _ticket(self, scope: Scope, send: Send) -> None:
        if scope["method"] != "POST":
            await _plain(send, 405, "POST with the daemon's bearer token")
            return
        checked = check_bearer(scope["headers"], self.bearer)
        if checked == "duplicate":
            await _plain(send, 400, "refused: send exactly one Authorization header")
            return
        if checked != "ok":
            await _plain(send, 401, "unauthorized: send Authorization: Bearer <token in mcp-token>")
            return
        await _plain(send, 200, self.sessions.new_ticket())

    async def _login(self, scope: Scope, send: Send) -> None:
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        redeemed = self.sessions.redeem(query.get("ticket", ""))
        if redeemed is None:
            await _plain(send, 401, "this sign-in link is used or expired: run `aide-memoire ui`")
            return
        sid, _ = redeemed
        cookie = (f"{COOKIE}={sid}; Path={PREFIX}; HttpOnly; SameSite=Strict; "
                  f"Max-Age={int(SESSION_TTL_S)}")
        await _plain(send, 303, "signed in", [
            (b"set-cookie", cookie.encode()), (b"location", f"{PREFIX}/".encode())])


async def _read_form(receive: Receive) -> dict[str, str] | None:
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
        if len(body) > MAX_FORM_BYTES:
            return None
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
