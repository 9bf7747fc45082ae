"""``status --json`` keeps the field names it had before db_driver and db_engine for one
release, with the values they had then, so a script that reads them keeps working."""

from __future__ import annotations

import json
import re
from pathlib import Path

from aide_memoire import Memory, Settings
from tests.clirun import invoke


def test_status_json_gives_the_driver_and_engine_under_the_former_names_too(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    report = json.loads(invoke(home, "status", "--json", check=True).stdout)
    assert report["sqlite_driver"] == report["db_driver"] != ""
    # The bare version, as before, of the SQLite this store was opened with.
    assert re.fullmatch(r"\d+\.\d+\.\d+", report["sqlite_version"])
    assert report["db_engine"] == f"SQLite {report['sqlite_version']}"
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        assert report["sqlite_version"] == memory.internals.db.describe().engine
