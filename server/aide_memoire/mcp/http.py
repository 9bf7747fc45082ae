"""The loopback HTTP daemon: streamable HTTP on 127.0.0.1, behind a per-user bearer token.

- It binds 127.0.0.1 only, on the data home's own port: derived from the home's path
  (so two homes do not collide), recorded in ``<home>/mcp-http-port`` on first start and
  reused, so a ``claude mcp add --transport http`` registration survives restarts.
  ``--port N`` overrides it (0 = any free port). A taken port is one clear error line.
- Every HTTP request must carry ``Authorization: Bearer <token>``; the token lives in
  ``<home>/mcp-token`` (0600, created once, reused by later daemons). A missing or wrong
  token gets 401 with a JSON-RPC error body, so an MCP client shows what is wrong.
- ``<home>/mcp-http.json`` (0600) names the URL, port and pid while the daemon runs, so
  clients of the same user can find it. It is owned by the pid inside: a daemon takes it
  only when no live daemon holds it, and removes it on SIGTERM / SIGINT only if it is its
  own, so stopping one of two daemons never hides the other.
- The SDK's DNS-rebinding guard is on (Host must be a loopback name), so a web page in
  the user's browser cannot reach the daemon through a rebound name either.
- One daemon per data home: it holds an exclusive lock on ``<home>/daemon.lock`` for its
  whole life, taken before the store opens, so a second one (fifty hooks starting one at
  once, or a person's ``serve --http`` beside a hook's) exits at once with a clear line.
- It exits by itself after ``daemon_idle_s`` seconds with no request in progress and none
  arriving (``IdleWatch``), so a daemon a hook started never outlives its use.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn

from ..engine.core.errors import AideMemoireError
from ..web.headers import check_bearer, loopback_host, single_header

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from starlette.types import ASGIApp, Receive, Scope, Send

    from ..engine.facade.memory import Memory

__all__ = [
    "DISCOVERY_FILE",
    "LOCK_FILE",
    "HOOK_PATH",
    "HOST",
    "PORT_FILE",
    "TOKEN_FILE",
    "BearerAuth",
    "DaemonRunning",
    "IdleWatch",
    "PortInUse",
    "bind_daemon",
    "default_port",
    "HookRoute",
    "ensure_token",
    "hold_daemon_lock",
    "read_discovery",
    "serve_http",
]

HOST = "127.0.0.1"
PATH = "/mcp"
TOKEN_FILE = "mcp-token"
DISCOVERY_FILE = "mcp-http.json"
PORT_FILE = "mcp-http-port"
LOCK_FILE = "daemon.lock"
# Derived ports sit below Linux's ephemeral range (32768-60999), where the kernel hands
# out ports to outgoing connections, and above most well-known services.
PORT_LOW, PORT_HIGH = 20000, 32767


class PortInUse(AideMemoireError):
    """The daemon's port is taken; the message names the port and the way out."""


class DaemonRunning(AideMemoireError):
    """Another daemon holds this data home's lock; the message names it and the way out."""


def _try_lock(fd: int) -> bool:
    """An exclusive, non-blocking lock on the open file ``fd``; False if another holds it."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def hold_daemon_lock(home: Path) -> int:
    """Take this home's daemon lock for the life of the process (the open descriptor is
    returned and must stay open; the system releases the lock when the process ends,
    however it ends). Raises ``DaemonRunning`` when another daemon holds it."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = home / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    if not _try_lock(fd):
        os.close(fd)
        try:
            pid = path.read_text(encoding="utf-8").strip() or "unknown"
        except OSError:
            pid = "unknown"
        raise DaemonRunning(
            f"another aide-memoire daemon already serves this store (pid {pid}, lock "
            f"{path}): use it (its URL is in {home / DISCOVERY_FILE}) or stop it "
            f"(kill {pid}) first")
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())  # who holds it, for the message above
    return fd


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


def derived_port(home: Path) -> int:
    """The home's port from its absolute path: stable across restarts and machines' reboots."""
    digest = hashlib.sha256(str(home.expanduser().resolve()).encode()).digest()
    return PORT_LOW + int.from_bytes(digest[:4], "big") % (PORT_HIGH - PORT_LOW + 1)


def default_port(home: Path) -> int:
    """The port recorded in ``<home>/mcp-http-port``, else the derived one."""
    try:
        recorded = int((home / PORT_FILE).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return derived_port(home)
    return recorded if 1 <= recorded <= 65535 else derived_port(home)


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _busy_message(home: Path, port: int, is_default: bool) -> str:
    # Never this store's own daemon: its lock (hold_daemon_lock) refused a second one
    # before any port was bound, so whatever holds the port is another program (or
    # another store's daemon).
    where = (f"this store's port, recorded in {home / PORT_FILE}" if is_default
             else "given with --port")
    return (f"port {port} ({where}) is in use by another program (or another store's "
            f"daemon): stop it, pass --port N "
            f"(0 = any free port)" + (f", or write another port number in {home / PORT_FILE}"
                                      if is_default else ""))


def bind_daemon(home: Path, port: int | None) -> socket.socket:
    """The listening socket on ``port`` (None: the home's default, recorded once bound).

    Bound before the event loop starts, so a taken port is one ``PortInUse`` with a clear
    message instead of an exception group from inside the server's task group.
    """
    chosen = default_port(home) if port is None else port
    try:
        sock = bind_loopback(chosen)
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, errno.EACCES):
            raise PortInUse(_busy_message(home, chosen, port is None)) from None
        raise
    if port is None and not (home / PORT_FILE).exists():
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        _write_private(home / PORT_FILE, f"{chosen}\n")
    return sock


def _unauthorized_body(token_file: Path) -> bytes:
    # A JSON-RPC error (id null), which the MCP SDK client shows as the error's message;
    # a plain body would reach the user as "Server returned an error response".
    return _error_body(f"unauthorized: the bearer token is missing or wrong; send "
                       f"'Authorization: Bearer <token>' with the token in {token_file}")


class BearerAuth:
    """Pure ASGI guard: 421 unless Host is a loopback name (and the daemon's port, if
    any), 400 with two Authorization headers, 401 unless the one carries the token.
    Lifespan passes through."""

    def __init__(self, app: ASGIApp, token: str, token_file: Path) -> None:
        self.app = app
        self.token = token
        self.body = _unauthorized_body(token_file)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = scope["headers"]
            port = (scope.get("server") or ("", None))[1]
            # The SDK's own rebinding guard matches "localhost:*" by prefix, so
            # "localhost:1.evil.example" passed it; this parse is exact (web/headers.py).
            if loopback_host(single_header(headers, b"host"), port) is None:
                await _refuse(send, 421, _error_body(
                    "refused: the Host header must be 127.0.0.1 or localhost, optionally "
                    "with this daemon's port, and nothing else"))
                return
            checked = check_bearer(headers, self.token)
            if checked == "duplicate":
                await _refuse(send, 400, _error_body(
                    "refused: the request carries more than one Authorization header; "
                    "send exactly one"))
                return
            if checked != "ok":
                await _refuse(send, 401, self.body,
                              [(b"www-authenticate", b'Bearer realm="aide-memoire"')])
                return
        await self.app(scope, receive, send)


def _error_body(message: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": None,
                       "error": {"code": -32001, "message": message}}).encode()


async def _refuse(send: Send, status: int, body: bytes,
                  extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *(extra or []),
        ],
    })
    await send({"type": "http.response.body", "body": body})


HOOK_PATH = "/hook"
HOOK_MAX_BYTES = 1_000_000


class HookRoute:
    """``POST /hook``: the Claude Code hooks' requests (hooks/service.py) answered
    by the warm engine, so a prompt hook process never loads the model. Behind the same
    bearer token as everything else (it sits inside BearerAuth)."""

    def __init__(self, app: ASGIApp, memory: Memory) -> None:
        self.app = app
        self.memory = memory

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != HOOK_PATH:
            await self.app(scope, receive, send)
            return
        status, answer = 200, {}
        body = b""
        more = True
        while more and len(body) <= HOOK_MAX_BYTES:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            if scope["method"] != "POST" or len(body) > HOOK_MAX_BYTES:
                raise ValueError("POST one JSON object of at most 1 MB")
            request = json.loads(body)
            if not isinstance(request, dict):
                raise ValueError("the body must be a JSON object")
            if self._warming():
                # A recall now would wait seconds for the model: the hook answers itself.
                status, answer = 503, {"error": "the model is still loading"}
            else:
                answer = await anyio.to_thread.run_sync(self._handle, request)
        except (ValueError, AideMemoireError) as exc:
            status, answer = 400, {"error": str(exc)}
        payload = json.dumps(answer).encode()
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})

    def _warming(self) -> bool:
        parts = self.memory.internals
        return parts.recaller.dense_live() and parts.embedder.space is None

    def _handle(self, request: dict[str, Any]) -> dict[str, Any]:
        from ..hooks.service import handle

        with self.memory.acting_as("hook"):
            answer = handle(self.memory, request)
        from ..hooks.injections import record_request

        record_request(self.memory.settings.home, request, answer, "daemon")
        return answer


class IdleWatch:
    """Pure ASGI: notes when the last HTTP request began or ended and how many are in
    progress (an open stream counts as in progress), so ``watch`` can stop the server
    once it has been idle for ``limit_s`` seconds."""

    def __init__(self, app: ASGIApp, limit_s: float) -> None:
        self.app = app
        self.limit_s = limit_s
        self.busy = 0
        self.last = time.monotonic()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.busy += 1
        self.last = time.monotonic()
        try:
            await self.app(scope, receive, send)
        finally:
            self.busy -= 1
            self.last = time.monotonic()

    def idle_for(self) -> float:
        return 0.0 if self.busy else time.monotonic() - self.last

    async def watch(self, server: uvicorn.Server) -> None:
        """Ask ``server`` to stop once idle for the limit (returns at once with no limit)."""
        if self.limit_s <= 0:
            return
        step = min(5.0, max(0.2, self.limit_s / 4))
        while not server.should_exit:
            await anyio.sleep(step)
            if self.idle_for() >= self.limit_s:
                print(f"aide-memoire: no request for {self.limit_s:g} s: the daemon exits "
                      "(setting daemon_idle_s; a hook starts it again when needed)",
                      file=sys.stderr, flush=True)
                server.should_exit = True
                return


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


def _claim_discovery(home: Path, info: dict[str, Any]) -> bool:
    """Write the discovery file unless another live daemon owns it; True if it is ours."""
    current = read_discovery(home)
    if current and current.get("pid") != os.getpid() and _alive(current.get("pid")):
        return False
    _write_private(home / DISCOVERY_FILE, json.dumps(info, indent=2) + "\n")
    return True


def _release_discovery(home: Path) -> None:
    current = read_discovery(home)
    if current is not None and current.get("pid") == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            (home / DISCOVERY_FILE).unlink()


async def serve_http(
    server: Server[Any],
    home: Path,
    *,
    sock: socket.socket | None = None,
    port: int = 0,
    announce: str = "",
    memory: Memory | None = None,
    idle_s: float = 0.0,
) -> None:
    """Serve on ``sock`` (else a new one on ``port``) until SIGTERM / SIGINT, announced in
    the discovery file meanwhile when no other live daemon owns it. With ``memory``, the
    hooks' route and the web page (under /ui, its own guard: web/security) are served too.
    With ``idle_s`` > 0 it stops after that long without a request."""
    token = ensure_token(home)
    inner: ASGIApp = server.streamable_http_app(streamable_http_path=PATH, host=HOST)
    if memory is not None:
        inner = HookRoute(inner, memory)
    app: ASGIApp = BearerAuth(inner, token, home / TOKEN_FILE)
    if memory is not None:
        from ..web import mount_web

        app = mount_web(app, memory, token)
    idle = IdleWatch(app, idle_s)
    app = idle
    sock = sock or bind_loopback(port)
    bound = sock.getsockname()[1]
    discovery = home / DISCOVERY_FILE
    info = {
        "url": f"http://{HOST}:{bound}{PATH}",
        "host": HOST,
        "port": bound,
        "pid": os.getpid(),
        "token_file": str(home / TOKEN_FILE),
    }
    owned = _claim_discovery(home, info)
    found = (f"; found through {discovery}" if owned else
             f"; {discovery} names another running daemon, so this one is not in it")
    print(f"aide-memoire: serving MCP over HTTP at {info['url']} (token in "
          f"{info['token_file']}){announce}{found}", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    server_ = _Uvicorn(config)
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(idle.watch, server_)
            await server_.serve(sockets=[sock])
            tasks.cancel_scope.cancel()
    finally:
        _release_discovery(home)
        sock.close()
