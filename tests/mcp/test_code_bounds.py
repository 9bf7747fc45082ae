"""The code-index tool refuses system folders, also behind a link named like a project."""

from __future__ import annotations

import os
from pathlib import Path

from aide_memoire import Memory
from aide_memoire.engine.storage.sqlite_steps import code_index_present as present

from .conftest import connect


async def test_code_index_tool_refuses_proc_through_a_link(memory: Memory, tmp_path: Path) -> None:
    link = tmp_path / "my-project"
    os.symlink("/proc/self", link)
    async with connect(memory) as client:
        for root in (str(link), "/etc", "/"):
            result = await client.call_tool("memory_code_index", {"root": root})
            assert result.is_error
            assert "code index only reads a project" in result.content[0].text  # type: ignore[union-attr]
    # Nothing written, not even the code index's tables.
    assert not present(memory.internals.db.conn())
