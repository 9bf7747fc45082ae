"""The hooks' folder and log: what the command hook (cli/hook.py), the stdio front
(mcp/front.py) and the ``hook_prompt`` tool (mcp/hooks.py) share.

Standard library only: the command hook and the front import it before anything heavy.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

__all__ = ["LOG_MAX_BYTES", "log", "make_home"]

LOG_MAX_BYTES = 1_000_000


def make_home(home: Path) -> None:
    """Create the store's folder as the store itself does (engine/storage/db.py: mode 0700).
    Raises OSError when it cannot be made."""
    if not home.is_dir():
        home.mkdir(parents=True, mode=0o700)
        os.chmod(home, 0o700)


def log(home: Path, event: str, message: str, **fields: Any) -> None:
    """One JSON line in <home>/logs/hooks.log (rotated once at 1 MB). Never raises."""
    try:
        folder = home / "logs"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / "hooks.log"
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, folder / "hooks.log.1")
        line = json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                           "event": event, "message": message, **fields})
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    except OSError:
        pass
