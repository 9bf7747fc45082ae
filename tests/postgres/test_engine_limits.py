"""What the PostgreSQL store does not do yet fails at once with an error naming the
setting, never a driver's error (docs/postgres.md lists what works)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from aide_memoire import Memory
from aide_memoire.engine.core.errors import InvalidInput, StoreError

from .conftest import open_memory

SETTING = "AIDE_MEMOIRE_DATABASE_URL"


@pytest.fixture
def pg_memory(pg_url: str, tmp_path: Path) -> Iterator[Memory]:
    mem = open_memory("postgres", tmp_path / "home", pg_url, embedding_model="none",
                      extract_facts=False)
    yield mem
    mem.close()


@pytest.mark.parametrize("feature", ["snapshot", "snapshot_rotate", "doctor", "code_index"])
def test_sqlite_only_features_say_so(pg_memory: Memory, feature: str, tmp_path: Path) -> None:
    calls: dict[str, Callable[[], object]] = {
        "snapshot": pg_memory.snapshot,
        "snapshot_rotate": pg_memory.snapshot_rotate,
        "doctor": pg_memory.doctor,
        "code_index": lambda: pg_memory.code_index(tmp_path),
    }
    with pytest.raises(StoreError, match=f"SQLite store only.*{SETTING}"):
        calls[feature]()
    assert pg_memory.status().memories == 0  # the store is still usable after the refusal


def test_restore_refuses_a_postgres_home(pg_url: str, tmp_path: Path) -> None:
    from aide_memoire import Settings

    settings = Settings.from_env(home=tmp_path, database_url=pg_url)
    with pytest.raises(StoreError, match=f"restore works on the SQLite store only.*{SETTING}"):
        Memory.restore(tmp_path / "snap.db", settings=settings)


def test_facts_are_on_by_default_on_postgres(pg_url: str, tmp_path: Path) -> None:
    """No longer refused (tests/facts runs the facts suites on both backends)."""
    with open_memory("postgres", tmp_path, pg_url, embedding_model="none") as mem:
        memory_id = mem.store("Ines works at Acme.", namespace="n")
        assert [f.object for f in mem.memory_facts(memory_id, namespace="n")] == ["acme"]
        stage = next(s for s in mem.status().stages if s.name == "extraction")
        assert stage.live


def test_a_url_of_another_database_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=f"{SETTING} must be a postgresql:// URL, not mysql"):
        open_memory("postgres", tmp_path, "mysql://ann:hunter2@db/mem", embedding_model="none",
                    extract_facts=False)


def test_an_unreachable_server_is_a_clear_error_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://ann:hunter2@/mem?host={tmp_path}&connect_timeout=2"
    with pytest.raises(StoreError) as caught:
        open_memory("postgres", tmp_path / "home", url, embedding_model="none",
                    extract_facts=False)
    assert "hunter2" not in str(caught.value) and "mem" in str(caught.value)
