"""The lifecycle tools through the SDK's in-memory client (keyword-only store)."""

from __future__ import annotations

from datetime import timedelta

from aide_memoire import Memory
from aide_memoire.engine.core import clock

from .conftest import NAMESPACE, connect


async def test_feedback_maintenance_and_status_tools(memory: Memory) -> None:
    past = clock.format_time(clock.now() - timedelta(minutes=1))
    gone = memory.store("Parking is closed today.", namespace=NAMESPACE,
                        metadata={"expires_at": past})
    async with connect(memory) as client:
        result = await client.call_tool("memory_feedback", {"id": gone, "outcome": "helpful"})
        assert not result.is_error
        assert result.structured_content["estimate"] == 0.5
        bad = await client.call_tool("memory_feedback", {"id": gone, "outcome": "great"})
        assert bad.is_error
        dry = await client.call_tool("memory_maintenance_run", {})
        assert dry.structured_content["dry_run"] is True
        assert memory.get(gone, namespace=NAMESPACE).status == "active"
        done = await client.call_tool("memory_maintenance_run", {"apply": True})
        assert done.structured_content["done"] == 1
        status = await client.call_tool("memory_maintenance_status", {})
        (row,) = status.structured_content["namespaces"]
        assert row["namespace"] == NAMESPACE and row["archived"] == 1
        summary = await client.call_tool("memory_consolidate", {})
        assert summary.structured_content["dry_run"] is True
    assert memory.get(gone, namespace=NAMESPACE).status == "archived"
