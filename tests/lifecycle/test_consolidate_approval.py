"""Approving a consolidation from the review queue: the summary is encoded before the
deciding transaction (another writer is never made to wait for the model), and the
transaction refuses, writing nothing, when a source changed after the encoding.

The encoder is the real model, wrapped so that during each forward pass the test looks
at the store's lock from outside (a second connection, another Memory): assertions on
who holds the lock when, never on timings."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from aide_memoire import Memory
from aide_memoire.engine.core.errors import NotFound
from aide_memoire.engine.trust.models import ReviewItem

from .conftest import NS, Planted, settings


def _writer_lock_is_free(db_file: Path) -> bool:
    """Whether a second writer could begin now, asked without waiting at all."""
    probe = sqlite3.connect(db_file, timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError as exc:
        assert "locked" in str(exc) or "busy" in str(exc), exc
        return False
    finally:
        probe.close()


class DuringEncode:
    """Runs ``action`` inside every forward pass of ``memory``'s (real) encoder."""

    def __init__(self, memory: Memory, monkeypatch: pytest.MonkeyPatch,
                 action: Callable[[], None]) -> None:
        self.passes = 0
        real = memory.internals.embedder.encode

        def encode(texts: list[str]) -> Any:
            self.passes += 1
            action()
            return real(texts)

        monkeypatch.setattr(memory.internals.embedder, "encode", encode)


@pytest.fixture
def planned(scenario: Planted) -> Iterator[tuple[Memory, ReviewItem]]:
    with Memory(settings=settings(scenario.home)) as memory:
        memory.maintain(NS, apply=True)
        (item,) = [i for i in memory.review_queue(NS, 1000) if i.kind == "consolidate"]
        memory.internals.embedder.wait()  # loaded: the passes counted below are the summary's own
        yield memory, item


@pytest.fixture
def other_writer(scenario: Planted) -> Iterator[Memory]:
    """Another client of the same store (keyword-only: it needs no model)."""
    with Memory(settings=settings(scenario.home, embedding_model="none")) as other:
        yield other


def _summaries(memory: Memory) -> list[Any]:
    return list(memory.search(namespace=NS, kinds=["summary"]))


def test_a_concurrent_writer_is_not_held_up_by_the_encode(
    planned: tuple[Memory, ReviewItem], other_writer: Memory, scenario: Planted,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory, item = planned
    seen: list[tuple[bool, str]] = []

    def write_meanwhile() -> None:
        free = _writer_lock_is_free(memory.internals.db.local_state)
        written = other_writer.store(f"written during forward pass {len(seen)}",
                                     namespace=NS)
        seen.append((free, written))

    during = DuringEncode(memory, monkeypatch, write_meanwhile)
    decision = memory.review_decide(item.id, "approve")
    assert decision.applied
    assert during.passes >= 1 and len(seen) == during.passes
    assert all(free for free, _ in seen), "the writer's lock was held through the encode"
    (summary,) = _summaries(memory)
    assert summary.content.startswith(f"Summary of {len(scenario.billing)} memories")
    assert all(memory.get(i, namespace=NS).status == "archived" for i in scenario.billing)
    for _, written in seen:  # the other client's writes all landed
        assert memory.get(written, namespace=NS).status == "active"


def test_a_source_edited_after_the_encode_is_refused_and_nothing_is_written(
    planned: tuple[Memory, ReviewItem], other_writer: Memory, scenario: Planted,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory, item = planned
    source = sorted(scenario.billing)[0]
    before = memory.get(source, namespace=NS).content

    def edit_a_source() -> None:
        other_writer.update(source, namespace=NS, content=before + " Edited meanwhile.")

    DuringEncode(memory, monkeypatch, edit_a_source)
    with pytest.raises(NotFound, match=f"memory {source} changed or left"):
        memory.review_decide(item.id, "approve")
    assert _summaries(memory) == []
    assert all(memory.get(i, namespace=NS).status == "active" for i in scenario.billing)
    (still,) = [i for i in memory.review_queue(NS, 1000) if i.id == item.id]
    assert still.status == "pending"  # nothing was decided: it can be rejected or re-planned


def test_a_field_changed_after_the_encode_is_taken_from_the_transaction(
    planned: tuple[Memory, ReviewItem], other_writer: Memory, scenario: Planted,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A source's importance raised during the encode changes no text: the summary is
    written, with the importance read inside the transaction."""
    memory, item = planned
    source = sorted(scenario.billing)[0]

    def raise_importance() -> None:
        other_writer.update(source, namespace=NS, importance=0.97)

    DuringEncode(memory, monkeypatch, raise_importance)
    assert memory.review_decide(item.id, "approve").applied
    (summary,) = _summaries(memory)
    assert summary.importance == pytest.approx(0.97)


def test_an_edit_of_a_source_before_the_decision_is_refused_without_encoding(
    planned: tuple[Memory, ReviewItem], scenario: Planted, monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory, item = planned
    source = sorted(scenario.billing)[-1]
    memory.update(source, namespace=NS, content="The billing service was rewritten.")
    during = DuringEncode(memory, monkeypatch, lambda: None)
    with pytest.raises(NotFound, match="changed or left"):
        memory.review_decide(item.id, "approve")
    assert during.passes == 0 and _summaries(memory) == []
    # Rejecting it still works.
    assert memory.review_decide(item.id, "reject").applied
