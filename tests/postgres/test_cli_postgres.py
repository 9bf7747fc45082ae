"""The CLI against a PostgreSQL store, chosen by AIDE_MEMOIRE_DATABASE_URL alone: the same
commands, the same JSON; a refused feature exits with the error on stderr."""

from __future__ import annotations

import json
from pathlib import Path

from tests.clirun import invoke


def test_the_cli_round_trip_on_postgres(pg_url: str, tmp_path: Path) -> None:
    env = {"AIDE_MEMOIRE_DATABASE_URL": pg_url, "AIDE_MEMOIRE_EXTRACT_FACTS": "false"}
    home = tmp_path / "home"

    def run(*args: str) -> dict[str, object]:
        done = invoke(home, *args, "--json", env=env, check=True)
        found: dict[str, object] = json.loads(done.stdout)
        return found

    memory_id = str(run("store", "Alice prefers tabs over spaces", "-n", "user:alice",
                        "--tags", "style")["id"])
    hits = run("recall", "tabs or spaces?", "-n", "user:alice")["hits"]
    assert [h["id"] for h in hits] == [memory_id]  # type: ignore[attr-defined]
    assert run("status")["namespaces"] == {"user:alice": 1}
    refused = invoke(home, "snapshot", "create", env=env)
    assert refused.returncode != 0 and refused.stdout == ""
    assert "AIDE_MEMOIRE_DATABASE_URL" in refused.stderr and "Traceback" not in refused.stderr
    assert invoke(home, "forget", memory_id, "-n", "user:alice", env=env).returncode == 0
    assert run("recall", "tabs", "-n", "user:alice")["hits"] == []
    # Nothing went to a SQLite file in the home: the server holds the store.
    assert not (home / "memory.db").exists()
