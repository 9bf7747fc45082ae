"""A writer killed with SIGKILL at random points never leaves a damaged store or loses a
write it had seen acknowledged (the writer and the checks: tests/ops/killed_writers.py)."""

from __future__ import annotations

import os
from pathlib import Path

from aide_memoire import Memory
from aide_memoire.engine.core.settings import Settings

from .killed_writers import kill_writers_at_random


def test_sigkill_at_random_points_loses_no_acknowledged_write(home: Path) -> None:
    settings = Settings(home=home, embedding_model="none")
    Memory(home, settings=settings).close()
    kill_writers_at_random(home, {**os.environ, "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"},
                           1234, lambda: Memory(settings=settings))
