"""The real Claude Code CLI with the plugin installed from this repository's marketplace
into a throwaway HOME, talking to the local Messages API stand-in (standin.py)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from aide_memoire.engine.core.settings import default_model_cache

from ..pinned_clients import CLAUDE, require
from ..plugin.conftest import BARE_PATH, REPO, VENV_BIN
from .standin import StandIn, standin

PREPARE_MODEL = ("from aide_memoire.engine.recall.embed import Embedder; "
                 "from aide_memoire.engine.core.settings import Settings; "
                 "s = Settings.from_env(); "
                 "e = Embedder(s.embedding_model, backend=s.embedding_backend, "
                 "int8=s.embedding_int8, cache_dir=s.model_cache_dir); assert e.wait()")

BASE_ENV = {
    "PATH": BARE_PATH,
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    # Any key: the stand-in does not check it, and no real service is reachable.
    "ANTHROPIC_API_KEY": "sk-e2e-standin-key",
    "MCP_TIMEOUT": "60000",
}


def require_claude() -> None:
    require(CLAUDE, "Claude Code CLI")


def run_claude(*args: str, cwd: Path, env: dict[str, str],
               timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLAUDE), *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, check=False)


def install_plugin(env: dict[str, str], cwd: Path) -> None:
    """What a user does: add this repository's marketplace, install the plugin."""
    added = run_claude("plugin", "marketplace", "add", str(REPO), cwd=cwd, env=env)
    assert added.returncode == 0, added.stdout + added.stderr
    installed = run_claude("plugin", "install", "aide-memoire@aide-memoire", cwd=cwd, env=env)
    assert installed.returncode == 0, installed.stdout + installed.stderr


def _daemons(store: Path) -> set[int]:
    """Pids of `serve --http` processes whose command line names this test's store."""
    pids: set[int] = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            words = cmdline.read_bytes().split(b"\0")
            if str(store).encode() in words and b"--http" in words:
                pids.add(int(cmdline.parent.name))
    return pids


def stop_daemon(store: Path) -> None:
    """Stop the loopback daemon the hooks started, detached and on demand, on this test's
    store: by its pid, never by name."""
    time.sleep(1)  # a hook that just spawned it
    for pid in _daemons(store):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while _daemons(store) and time.monotonic() < deadline:
        time.sleep(0.2)


def wait_for(check: Callable[[], Any], what: str, timeout: float = 90) -> Any:
    """Poll ``check`` until it returns something truthy (capture runs detached)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.5)


@dataclass
class World:
    """One temporary HOME with the plugin installed, one store, one stand-in."""

    root: Path
    home: Path
    store: Path
    tmp: Path
    api: StandIn
    env: dict[str, str] = field(default_factory=dict)

    def project(self, name: str) -> Path:
        path = self.root / "work" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def session(self, prompt: str, cwd: Path) -> list[dict[str, Any]]:
        """One headless session; the Messages API request bodies it sent."""
        self.api.clear()
        done = run_claude("-p", prompt, cwd=cwd, env=self.env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Noted." in done.stdout, done.stdout + done.stderr
        bodies = self.api.message_bodies()
        assert bodies, f"no /v1/messages request; the stand-in saw {self.api.requests()}"
        return bodies

    def captures_done(self) -> bool:
        """True when no detached capture of this store still runs: no process
        ``aide-memoire hook stop|pre-compact|session-end`` with this AIDE_MEMOIRE_HOME
        (read from /proc, so the answer is the processes' own state, not a delay)."""
        marker = f"AIDE_MEMOIRE_HOME={self.store}".encode()
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                args = (proc / "cmdline").read_bytes().split(b"\0")
                if b"hook" not in args or not CAPTURE_EVENTS & set(args):
                    continue
                if marker in (proc / "environ").read_bytes().split(b"\0"):
                    return False
            except OSError:  # ended while we looked, or not ours to read
                continue
        return True

    def export(self, namespace: str | None = None) -> list[dict[str, Any]]:
        args = [str(VENV_BIN / "aide-memoire"), "--home", str(self.store), "export",
                "--reveal-pii"]
        if namespace:
            args += ["--namespace", namespace]
        done = subprocess.run(args, env=self.env, capture_output=True, text=True,
                              timeout=120, check=False)
        if done.returncode != 0:
            return []  # the store may not exist yet
        rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        return [r for r in rows if "id" in r]


CAPTURE_EVENTS = {b"stop", b"pre-compact", b"session-end"}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory,
          request: pytest.FixtureRequest) -> Iterator[World]:
    require_claude()
    # keyword-only unless the test module names a model (EMBEDDING_MODEL = "default").
    model = getattr(request.module, "EMBEDDING_MODEL", "none")
    root = tmp_path_factory.mktemp("e2e")
    home, store, tmp = root / "claude-home", root / "store", root / "tmp"
    for folder in (home, tmp):
        folder.mkdir()
    with standin(root / "requests.jsonl") as api:
        env = {**BASE_ENV, "HOME": str(home), "TMPDIR": str(tmp),
               "ANTHROPIC_BASE_URL": api.url,
               # The hooks and the server run this checkout's command on a test store,
               # keyword-only unless the module asks for the model.
               "AIDE_MEMOIRE_BIN": str(VENV_BIN / "aide-memoire"),
               "PYTHONPATH": str(REPO / "server"),
               "AIDE_MEMOIRE_HOME": str(store),
               "AIDE_MEMOIRE_EMBEDDING_MODEL": model}
        if model != "none":
            # The model's ONNX copy as a user has it after a first start (exported once,
            # minutes of CPU here): the throwaway HOME would otherwise export it again
            # inside the first session's hook timeout.
            env["AIDE_MEMOIRE_MODEL_CACHE_DIR"] = (os.environ.get("AIDE_MEMOIRE_MODEL_CACHE_DIR")
                                                   or str(default_model_cache()))
            subprocess.run([str(VENV_BIN / "python"), "-c", PREPARE_MODEL], env=env,
                           check=True, timeout=600, capture_output=True)
        world = World(root=root, home=home, store=store, tmp=tmp, api=api, env=env)
        install_plugin(env, world.project("setup"))
        try:
            yield world
        finally:
            wait_for(world.captures_done, "the detached captures to end", timeout=60)
            stop_daemon(store)
