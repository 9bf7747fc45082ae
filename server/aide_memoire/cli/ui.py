"""``aide-memoire ui``: open the web page of the loopback daemon, starting it if need be.

The daemon's bearer token (``<home>/mcp-token``) buys a one-time sign-in ticket; the
browser gets only the ticket, which the page turns into a session cookie.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import webbrowser
from pathlib import Path
from typing import Any

import click

from ..engine.core.settings import Settings
from ..mcp.http import TOKEN_FILE, read_discovery
from ..web import PREFIX
from .output import fail

__all__ = ["ui"]

START_TIMEOUT_S = 60.0


def _alive(info: dict[str, Any] | None) -> bool:
    if not info or not isinstance(info.get("pid"), int) or not isinstance(info.get("port"), int):
        return False
    try:
        os.kill(info["pid"], 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _start(home: Path) -> dict[str, Any]:
    """Start ``serve --http`` detached (it outlives this command) and wait for its port."""
    logs = home / "logs"
    logs.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(logs / "daemon.log", "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "aide_memoire.cli.main", "--home", str(home), "serve",
             "--http"], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        info = read_discovery(home)
        if info and info.get("pid") == proc.pid:
            return info
        if proc.poll() is not None:
            fail(f"the daemon exited at start (code {proc.returncode}); see {logs / 'daemon.log'}")
        time.sleep(0.1)
    fail(f"the daemon did not announce its port in {START_TIMEOUT_S:.0f} s; "
         f"see {logs / 'daemon.log'}")
    raise AssertionError  # fail exits


def _ticket(info: dict[str, Any], token: str) -> str:
    request = urllib.request.Request(
        f"http://127.0.0.1:{info['port']}{PREFIX}/_ticket", method="POST", data=b"",
        headers={"Authorization": f"Bearer {token}"})
    # A daemon announces its port once bound, a moment before it accepts connections.
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:  # loopback only
                return str(answer.read().decode().strip())
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                fail("the running daemon has no web page (an older version): stop it, retry")
            fail(f"the daemon refused a sign-in ticket: HTTP {exc.code}")
        except (urllib.error.URLError, OSError) as exc:
            refused = isinstance(getattr(exc, "reason", exc), ConnectionRefusedError)
            if not refused or time.monotonic() > deadline:
                fail(f"cannot reach the daemon on port {info['port']}: {exc}")
            time.sleep(0.1)


@click.command()
@click.option("--no-open", is_flag=True, help="Print the sign-in URL; do not open a browser.")
@click.pass_context
def ui(ctx: click.Context, no_open: bool) -> None:
    """Open the local web page (starts the loopback daemon if none runs)."""
    home = Settings.from_env(home=ctx.obj.get("home")).home
    info = read_discovery(home)
    if not _alive(info):
        print("aide-memoire: starting the daemon...", file=sys.stderr, flush=True)
        info = _start(home)
    assert info is not None
    token = (home / TOKEN_FILE).read_text(encoding="utf-8").strip()
    link = f"http://127.0.0.1:{info['port']}{PREFIX}/login?ticket={_ticket(info, token)}"
    print(f"aide-memoire: web page at {link} (the link works once)", file=sys.stderr, flush=True)
    if not no_open:
        webbrowser.open(link)
