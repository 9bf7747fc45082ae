"""The loopback HTTP daemon: streamable HTTP on 127.0.0.1, behind a per-user bearer token.

- It binds 127.0.0.1 only, on an ephemeral port chosen by the kernel.
- Every HTTP request must carry ``Authorization: Bearer <token>``; the token lives in
  ``<home>/mcp-token`` (0600, created once, reused by later daemons).
- ``<home>/mcp-http.json`` (0600) names the URL, port and pid while the daemon runs, so
  clients of the same user can find it; it is removed on SIGTERM / SIGINT.
- The SDK's DNS-rebinding guard is on (Host must be a loopback name), so a web page in
  the user's browser cannot reach the daemon through a rebound name either.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from starlette.types import ASGIApp, Receive, Scope, Send

    from ..engine.memory import Memory

__all__ = [
    "DISCOVERY_FILE",
    "HOST",
    "TOKEN_FILE",
    "BearerAuth",
    "ensure_token",
    "read_discovery",
    "serve_http",
]

HOST = "127.0.0.1"
PATH = "/mcp"
TOKEN_FILE = "mcp-token"
DISCOVERY_FILE = "mcp-http.json"


def _write_private(path: Path, text: str) -> None:
    """Write a 0600 file atomically (never readable by others, even for a moment)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def ensure_token(home: Path) -> str:
    """The user's daemon token, created (0600) on first use."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = home / TOKEN_FILE
    if path.exists():
        os.chmod(path, 0o600)
        token = path.read_text(encoding="utf-8").strip()
        if len(token) >= 32:
            return token
    token = secrets.token_urlsafe(32)
    _write_private(path, token + "\n")
    return token


def read_discovery(home: Path) -> dict[str, Any] | None:
    """The running daemon's URL, port and pid, or None if none is announced."""
    try:
        data: dict[str, Any] = json.loads((home / DISCOVERY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data


class BearerAuth:
    """Pure ASGI guard: 401 unless the request carries the token. Lifespan passes through."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = b'{"error":"unauthorized: send Authorization: Bearer <token in mcp-token>"}'
                await send({
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"www-authenticate", b'Bearer realm="aide-memoire"'),
                    ],
                })
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


class _Uvicorn(uvicorn.Server):
    """uvicorn that stops cleanly on SIGTERM / SIGINT without re-raising the signal,
    so the caller's cleanup (removing the discovery file) always runs."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        originals = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)


def bind_loopback(port: int = 0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    return sock


async def serve_http(
    server: MCPServer[Any],
    home: Path,
    *,
    port: int = 0,
    memory: Memory | None = None,
) -> None:
    """Serve until SIGTERM / SIGINT; announce the port in the discovery file meanwhile.
    With ``memory``, the web page is served under /ui too (its own guard, web/security)."""
    token = ensure_token(home)
    app: ASGIApp = BearerAuth(server.streamable_http_app(streamable_http_path=PATH, host=HOST),
                              token)
    if memory is not None:
        from ..web import mount_web

        app = mount_web(app, memory, token)
    sock = bind_loopback(port)
    bound = sock.getsockname()[1]
    discovery = home / DISCOVERY_FILE
    info = {
        "url": f"http://{HOST}:{bound}{PATH}",
        "host": HOST,
        "port": bound,
        "pid": os.getpid(),
        "token_file": str(home / TOKEN_FILE),
    }
    _write_private(discovery, json.dumps(info, indent=2) + "\n")
    print(f"aide-memoire: serving {info['url']} (token in {info['token_file']})",
          file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    try:
        await _Uvicorn(config).serve(sockets=[sock])
    finally:
        with contextlib.suppress(FileNotFoundError):
            if read_discovery(home) == info:  # another daemon may have taken over the file
                discovery.unlink()
        sock.close()
