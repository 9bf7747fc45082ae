"""What a person at a terminal sees from `aide-memoire serve`: one line saying what is
served and where the store is, then the model's preparation, all on stderr."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from aide_memoire.mcp.registry import TOOLS

from .conftest import BIN, server_env


def test_serve_says_what_it_serves_and_when_the_model_is_ready(tmp_path: Path) -> None:
    home = tmp_path / "home"
    lines: list[str] = []
    with subprocess.Popen([str(BIN / "aide-memoire"), "serve", "-n", "project:tty"],
                          env=server_env(home), stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stderr is not None and proc.stdin is not None and proc.stdout is not None
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
            if "embedding model ready" in line or "keyword-only" in line:
                break
        proc.stdin.close()  # EOF: the server stops
        out = proc.stdout.read()
        proc.stderr.read()
        proc.wait(60)
    assert lines[0] == (f"aide-memoire: serving MCP over stdio; store {home / 'memory.db'}, "
                        f"default namespace project:tty, {len(TOOLS)} tools")  # none off
    assert any(line.startswith("aide-memoire: loading the embedding model") for line in lines)
    assert "dense recall is live" in lines[-1], lines
    assert out == ""  # stdout is the transport's: nothing unless a client asks
