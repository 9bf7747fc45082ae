"""The loopback HTTP daemon: token required, loopback only, discovery file cleaned up."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from aide_memoire.mcp.http import DISCOVERY_FILE, PORT_FILE, TOKEN_FILE, derived_port
from mcp import Client

from .conftest import BIN, server_env

HANDSHAKE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _start(home: Path) -> tuple[subprocess.Popen[bytes], dict[str, object]]:
    env = server_env(home, AIDE_MEMOIRE_EMBEDDING_MODEL="none")
    log = home.parent / f"daemon-{time.monotonic_ns()}.err"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [str(BIN / "aide-memoire"), "serve", "--http", "-n", "project:web"],
            env=env, stderr=err,
        )
    discovery = home / DISCOVERY_FILE
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if discovery.exists():
            info: dict[str, object] = json.loads(discovery.read_text())
            try:
                with socket.create_connection(("127.0.0.1", int(str(info["port"]))), timeout=1):
                    return proc, info
            except OSError:
                pass
        time.sleep(0.1)
    proc.kill()
    proc.wait(10)
    raise AssertionError(f"daemon did not start: {log.read_text(errors='replace')}")


@pytest.fixture(scope="module")
def daemon(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[subprocess.Popen[bytes], dict[str, object], Path]]:
    home = tmp_path_factory.mktemp("daemon") / "home"
    proc, info = _start(home)
    try:
        yield proc, info, home
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def _non_loopback_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # UDP connect sends nothing; picks a route
            address = str(probe.getsockname()[0])
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_files_are_private_and_name_the_port(daemon: tuple[Any, ...]) -> None:
    proc, info, home = daemon
    for name in (TOKEN_FILE, DISCOVERY_FILE):
        assert stat.S_IMODE((home / name).stat().st_mode) == 0o600, name
    assert info["pid"] == proc.pid and info["host"] == "127.0.0.1"
    assert info["url"] == f"http://127.0.0.1:{info['port']}/mcp"


def test_requests_without_or_with_a_wrong_token_are_refused(daemon: tuple[Any, ...]) -> None:
    _, info, home = daemon
    url = str(info["url"])
    token = (home / TOKEN_FILE).read_text().strip()
    with httpx2.Client(timeout=10) as http:
        assert http.post(url, json=HANDSHAKE, headers=HEADERS).status_code == 401
        wrong = {**HEADERS, "Authorization": "Bearer " + "x" * len(token)}
        assert http.post(url, json=HANDSHAKE, headers=wrong).status_code == 401
        right = {**HEADERS, "Authorization": f"Bearer {token}"}
        assert http.post(url, json=HANDSHAKE, headers=right).status_code == 200
        # DNS rebinding: a page on another name cannot talk to the daemon either.
        rebound = {**right, "Host": f"evil.example:{info['port']}"}
        assert http.post(url, json=HANDSHAKE, headers=rebound).status_code == 421


def test_only_loopback_is_listening(daemon: tuple[Any, ...]) -> None:
    _, info, _ = daemon
    port = int(str(info["port"]))
    listening = [line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:]]
    local = {fields[1] for fields in listening if fields[3] == "0A"}  # 0A = LISTEN
    assert f"0100007F:{port:04X}" in local  # 127.0.0.1, little-endian hex
    assert f"00000000:{port:04X}" not in local
    address = _non_loopback_address()
    if address is not None:
        with pytest.raises(OSError):
            socket.create_connection((address, port), timeout=2).close()


async def test_client_with_the_token_works(daemon: tuple[Any, ...]) -> None:
    _, info, home = daemon
    token = (home / TOKEN_FILE).read_text().strip()
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(str(info["url"]), http_client=http)) as client,
    ):
        stored = await client.call_tool("memory_store", {"content": "served over HTTP"})
        assert stored.structured_content["namespace"] == "project:web"
        recalled = await client.call_tool("memory_recall", {"query": "HTTP"})
        assert recalled.structured_content["hits"][0]["content"] == "served over HTTP"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_discovery_file_is_removed_on_signal(tmp_path: Path, sig: signal.Signals) -> None:
    home = tmp_path / "home"
    proc, _ = _start(home)
    token = (home / TOKEN_FILE).read_text()
    os.kill(proc.pid, sig)
    assert proc.wait(30) == 0
    assert not (home / DISCOVERY_FILE).exists()
    if sig != signal.SIGTERM:
        return
    # The token stays: the next daemon (and its configured clients) reuse it.
    proc2, _ = _start(home)
    try:
        assert (home / TOKEN_FILE).read_text() == token
    finally:
        proc2.terminate()
        proc2.wait(30)


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        proc.wait(30)


def test_the_port_is_the_homes_own_and_survives_a_restart(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc, first = _start(home)
    _stop(proc)
    recorded = int((home / PORT_FILE).read_text())
    assert recorded == first["port"] == derived_port(home)
    proc, second = _start(home)
    try:
        # The URL a client registered stays right after a restart.
        assert second["url"] == first["url"]
    finally:
        _stop(proc)
    # Another home gets its own port, so two stores' daemons do not collide by default.
    assert derived_port(tmp_path / "other") != derived_port(home)


def test_a_second_daemon_for_the_same_store_exits_with_one_clear_line(
    daemon: tuple[Any, ...],
) -> None:
    # One daemon per data home: a second one, on the default port or any other, is refused
    # by the home's lock before it binds, naming the daemon that holds it.
    _, info, home = daemon
    env = server_env(home, AIDE_MEMOIRE_EMBEDDING_MODEL="none")
    before = (home / DISCOVERY_FILE).read_text()
    for extra in ([], ["--port", "0"]):
        second = subprocess.run([str(BIN / "aide-memoire"), "serve", "--http", *extra],
                                env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 1
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        assert "Traceback" not in second.stderr and "ExceptionGroup" not in second.stderr
        assert "already serves this store" in lines[0] and f"pid {info['pid']}" in lines[0]
        assert f"kill {info['pid']}" in lines[0]  # and says the way out
    assert (home / DISCOVERY_FILE).read_text() == before  # the first's discovery file kept


def test_a_port_taken_by_another_program_exits_with_one_clear_line(
    daemon: tuple[Any, ...], tmp_path: Path,
) -> None:
    _, info, _ = daemon  # another store's daemon holds the port
    env = server_env(tmp_path / "other", AIDE_MEMOIRE_EMBEDDING_MODEL="none")
    second = subprocess.run(
        [str(BIN / "aide-memoire"), "serve", "--http", "--port", str(info["port"])],
        env=env, capture_output=True, text=True, timeout=60)
    assert second.returncode == 1
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert "Traceback" not in second.stderr and "ExceptionGroup" not in second.stderr
    assert f"port {info['port']} (given with --port) is in use" in lines[0]
    assert "--port N" in lines[0]
    assert not (tmp_path / "other" / DISCOVERY_FILE).exists()


async def test_a_wrong_token_tells_the_sdk_client_what_is_wrong(daemon: tuple[Any, ...]) -> None:
    _, info, home = daemon
    headers = {"Authorization": "Bearer not-the-token"}
    async with httpx2.AsyncClient(headers=headers) as http:
        with pytest.raises(BaseException) as caught:  # the SDK wraps it in an ExceptionGroup
            async with Client(streamable_http_client(str(info["url"]), http_client=http)):
                pass
    errors = _leaves(caught.value)
    assert errors and all(isinstance(e, MCPError) for e in errors), errors
    # What the user sees: the cause and where the right token is.
    message = str(errors[0])
    assert "token is missing or wrong" in message
    assert str(home / TOKEN_FILE) in message


@pytest.mark.parametrize("host", [
    "localhost:1.evil.example", "127.0.0.1:{port}.evil.example", "localhost:{port}@evil.example",
    "localhost:{port}:80", "localhost:abc", "localhost:+{port}", "localhost:{other}",
    "evil.example", "localhost.evil.example:{port}", "",
])
def test_a_host_with_anything_beyond_a_loopback_name_and_port_is_refused(
    daemon: tuple[Any, ...], host: str,
) -> None:
    _, info, home = daemon
    port = int(str(info["port"]))
    token = (home / TOKEN_FILE).read_text().strip()
    headers = {**HEADERS, "Authorization": f"Bearer {token}",
               "Host": host.format(port=port, other=port + 1)}
    with httpx2.Client(timeout=10) as http:
        answer = http.post(str(info["url"]), json=HANDSHAKE, headers=headers)
    assert answer.status_code == 421, (host, answer.text)
    assert "Host header" in answer.json()["error"]["message"]


@pytest.mark.parametrize("host", ["localhost:{port}", "127.0.0.1:{port}"])
def test_a_loopback_host_with_or_without_the_port_is_served(
    daemon: tuple[Any, ...], host: str,
) -> None:
    _, info, home = daemon
    token = (home / TOKEN_FILE).read_text().strip()
    headers = {**HEADERS, "Authorization": f"Bearer {token}",
               "Host": host.format(port=info["port"])}
    with httpx2.Client(timeout=10) as http:
        answer = http.post(str(info["url"]), json=HANDSHAKE, headers=headers)
    assert answer.status_code != 421, (host, answer.text)


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "BeArEr", "Bearer"])
def test_the_authorization_scheme_is_case_insensitive(daemon: tuple[Any, ...], scheme: str) -> None:
    _, info, home = daemon
    token = (home / TOKEN_FILE).read_text().strip()
    with httpx2.Client(timeout=10) as http:
        answer = http.post(str(info["url"]), json=HANDSHAKE,
                           headers={**HEADERS, "Authorization": f"{scheme} {token}"})
        assert answer.status_code == 200, answer.text
        other = http.post(str(info["url"]), json=HANDSHAKE,
                          headers={**HEADERS, "Authorization": f"Basic {token}"})
        assert other.status_code == 401


def test_two_authorization_headers_are_refused_whatever_their_order(
    daemon: tuple[Any, ...],
) -> None:
    _, info, home = daemon
    token = (home / TOKEN_FILE).read_text().strip()
    for pair in ([f"Bearer {'x' * len(token)}", f"Bearer {token}"],
                 [f"Bearer {token}", f"Bearer {'x' * len(token)}"],
                 [f"Bearer {token}", f"Bearer {token}"]):
        headers = [*HEADERS.items(), *(("Authorization", value) for value in pair)]
        with httpx2.Client(timeout=10) as http:
            answer = http.post(str(info["url"]), json=HANDSHAKE, headers=headers)
        assert answer.status_code == 400, (pair, answer.text)
        assert "more than one Authorization" in answer.json()["error"]["message"]
