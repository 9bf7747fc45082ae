from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from tests.clirun import Completed, invoke


def keyword_settings(home: Path, **overrides: object) -> Settings:
    """Keyword-only settings: the trust layer needs no model, and tests stay fast."""
    return Settings(home=home, embedding_model="none", **overrides)  # type: ignore[arg-type]


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(settings=keyword_settings(tmp_path / "home")) as memory:
        yield memory


def cli(home: Path, *args: str, check: bool = True) -> Completed:
    """Run ``aide-memoire --home HOME ARGS`` keyword-only, in process (no model needed)."""
    return invoke(home, *args, check=check)
