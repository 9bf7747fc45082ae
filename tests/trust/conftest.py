from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings


def keyword_settings(home: Path, **overrides: object) -> Settings:
    """Keyword-only settings: the trust layer needs no model, and tests stay fast."""
    return Settings(home=home, embedding_model="none", **overrides)  # type: ignore[arg-type]


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(settings=keyword_settings(tmp_path / "home")) as memory:
        yield memory


def cli(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``aide-memoire --home HOME ARGS`` keyword-only (the trust commands need no model)."""
    env = {**os.environ, "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"}
    return subprocess.run(
        [sys.executable, "-m", "aide_memoire.cli.main", "--home", str(home), *args],
        env=env, capture_output=True, text=True, check=check,
    )
