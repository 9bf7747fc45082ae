"""A store that reaches its size limit refuses the write clearly and stays intact.

The limit is SQLite's max_page_count (Settings.max_db_pages), which fails a write the
way a full disk does ('database or disk is full'): same error path, reproducible.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aide_memoire import Memory
from aide_memoire.engine.core.errors import StoreFull
from aide_memoire.engine.core.settings import Settings


def _settings(home: Path, pages: int | None) -> Settings:
    return Settings(home=home, embedding_model="none", max_db_pages=pages)


def test_size_limit_fails_the_write_and_keeps_the_store(home: Path) -> None:
    with Memory(settings=_settings(home, None)) as memory:
        kept = [memory.store(f"early memory {i} about the billing ledger", namespace="full")
                for i in range(20)]
        memory.internals.db.conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = memory.internals.db.conn().execute("PRAGMA page_count").fetchone()[0]
    big = "lorem ipsum dolor sit amet " * 3000  # ~80 kB: several pages each
    with Memory(settings=_settings(home, pages + 8)) as memory:
        with pytest.raises(StoreFull, match="full") as caught:
            for i in range(50):
                memory.store(f"{i} {big}", namespace="full")
        assert "raise max_db_pages" in str(caught.value)
        assert [memory.get(i, namespace="full").id for i in kept] == kept
        assert memory.internals.db.conn().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert memory.doctor().healthy
        assert memory.recall("billing ledger", namespace="full")
    with Memory(settings=_settings(home, pages * 4)) as memory:
        new = memory.store(f"after raising the limit {big}", namespace="full")
        assert memory.get(new, namespace="full").content.startswith("after raising")
        assert memory.doctor().healthy
