"""Opening and closing a Memory: what it starts it stops; it leaves the process's logging alone."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from aide_memoire import Memory, Settings


def test_close_stops_the_background_maintenance_thread(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", embedding_model="none", auto_maintenance=True)
    memory = Memory(settings=settings)
    background = memory.internals.services.lifecycle.background
    assert background is not None and background.alive
    memory.store("a note for the maintenance loop", namespace="p")
    memory.close()
    assert not background.alive


def test_memory_does_not_configure_logging_for_the_process(tmp_path: Path) -> None:
    # A fresh interpreter: structlog's configuration is process-wide state.
    script = textwrap.dedent(f"""
        import structlog
        from aide_memoire import Memory
        with Memory({str(tmp_path / 'home')!r}) as memory:
            memory.store("hello", namespace="p")
        assert not structlog.is_configured(), "Memory() configured structlog"
        print("ok")
    """)
    env = {**os.environ, "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"  # and nothing of the engine's logs on stdout
