"""Near duplicates on write, per policy (real model): merge, stage for review, link."""

from __future__ import annotations

from pathlib import Path

from aide_memoire import Memory

from .conftest import settings

NS = "project:dups"
FIRST = "Backups of the main database run every night at 2am."
AGAIN = "Backups of the main database run every night at 2 am."
OTHER = "Backups of the wiki are taken weekly on Sundays."


def test_policies_merge_review_and_link(tmp_path: Path) -> None:
    with Memory(settings=settings(tmp_path / "merge", near_duplicate_policy="merge")) as memory:
        first = memory.store(FIRST, namespace=NS, tags=["ops"])
        other = memory.store(OTHER, namespace=NS)
        again = memory.store(AGAIN, namespace=NS, tags=["ops", "db"], importance=0.8)
        assert memory.get(again, namespace=NS).status == "archived"
        kept = memory.get(first, namespace=NS)
        assert kept.status == "active" and kept.tags == ["ops", "db"] and kept.importance == 0.8
        assert memory.get(other, namespace=NS).status == "active"
        hits = [h.id for h in memory.recall("database backups", namespace=NS)]
        assert first in hits and again not in hits
        (link,) = memory.links(again)
        assert link["kind"] == "merged_into" and link["target"] == first
        assert link["score"] >= memory.settings.near_duplicate_threshold
        # Within one batch too: the later row merges into the earlier one. (The pair
        # "9:30" / "9.30" measured 0.9198 once int8 vectors stopped depending on their
        # batch: a pair at the threshold tests the threshold, not the batch.)
        a, b = memory.store_many([{"content": "Standup moves to 9:30 from Monday."},
                                  {"content": "The standup moves to 9:30 from Monday."}],
                                 namespace=NS)
        assert memory.get(b, namespace=NS).status == "archived"
        assert memory.get(a, namespace=NS).status == "active"

    with Memory(settings=settings(tmp_path / "review", near_duplicate_policy="review")) as memory:
        first = memory.store(FIRST, namespace=NS)
        again = memory.store(AGAIN, namespace=NS)
        assert memory.get(again, namespace=NS).status == "active"
        (item,) = memory.review_queue(NS)
        assert (item.kind, item.memory_id, item.evidence["into"]) == ("merge", again, first)
        assert item.expires_at is not None
        assert memory.review_decide(item.id, "approve").applied
        assert memory.get(again, namespace=NS).status == "archived"
        status = memory.maintenance_status(NS)
        assert status.near_duplicates.startswith("review at cosine >= 0.92")
        assert status.namespaces[0].archived == 1

    with Memory(settings=settings(tmp_path / "link")) as memory:  # the default
        first = memory.store(FIRST, namespace=NS)
        again = memory.store(AGAIN, namespace=NS)
        assert memory.get(again, namespace=NS).status == "active"
        assert memory.review_queue(NS) == []
        assert [(lk["kind"], lk["target"]) for lk in memory.links(again)] == [
            ("near_duplicate", first)]
        # Turns are never deduplicated: two people may say the same thing.
        turns = memory.store_conversation(
            [{"speaker": "A", "content": AGAIN}, {"speaker": "B", "content": AGAIN}],
            namespace=NS)
        assert all(memory.links(t) == [] for t in turns)
