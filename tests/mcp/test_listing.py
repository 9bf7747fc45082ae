"""``python -m aide_memoire.mcp.listing``, run as its docstring says: it writes the listing
and nothing else, with no store to open and so no store failure to log."""

from __future__ import annotations

import json
import subprocess
import sys

from aide_memoire.mcp.front import LISTING


def test_regenerating_the_listing_opens_no_store_and_logs_nothing() -> None:
    done = subprocess.run([sys.executable, "-m", "aide_memoire.mcp.listing"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert json.loads(done.stdout) == json.loads(LISTING.read_text(encoding="utf-8"))
