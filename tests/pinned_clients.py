"""The real clients `make test` installs, pinned, into .tools/ (Claude Code, Codex CLI,
Gemini CLI, OpenCode, mcpb): where they are, and one rule for a missing one. Run by hand
without them, their tests are skipped; in CI (CI=true) a missing client is a failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = ["CLAUDE", "NODE_BIN", "require"]

NODE_BIN = Path(__file__).resolve().parents[1] / ".tools" / "node_modules" / ".bin"
CLAUDE = NODE_BIN / "claude"


def require(path: Path, name: str | None = None) -> Path:
    """``path`` if the client is installed; else skip the test (fail it in CI)."""
    if not path.exists():
        message = f"{name or path.name} not installed at {path}; run `make test`"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path
