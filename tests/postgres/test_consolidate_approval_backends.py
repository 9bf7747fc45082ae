"""Approving a consolidation on both backends: another client's write lands during the
summary's forward pass (SQLite's one writer; PostgreSQL's writer row lock), so the
model never runs inside the deciding transaction."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from aide_memoire import Settings

from ..lifecycle.conftest import BILLING, DISTINCT
from .conftest import open_memory

NS = "project:consolidate"


def test_another_writer_lands_during_the_encode(backend_name: str, backend_url: str | None,
                                                tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    model = Settings.model_fields["embedding_model"].default
    mem = open_memory(backend_name, home, backend_url, extract_facts=False,
                      embedding_model=model)
    other = open_memory(backend_name, home, backend_url, extract_facts=False,
                        embedding_model="none")
    try:
        assert mem.internals.embedder.wait(), mem.internals.embedder.error
        sources = [mem.store(text, namespace=NS, tags=["billing"]) for text in BILLING]
        for text in DISTINCT[:6]:
            mem.store(text, namespace=NS)
        mem.maintain(NS, apply=True)
        (item,) = [i for i in mem.review_queue(NS, 1000) if i.kind == "consolidate"]
        assert set(item.evidence["sources"]) == set(sources)
        landed: list[str] = []
        real = mem.internals.embedder.encode

        def encode(texts: list[str]) -> Any:
            # The other client writes from its own thread; were the lock held through this
            # pass, it could not land before the pass ends (the join's bound only keeps a
            # regression from hanging: a blocked writer fails here, not by its timing).
            writer = threading.Thread(target=lambda: landed.append(
                other.store(f"written during pass {len(landed)}", namespace=NS)))
            writer.start()
            writer.join(timeout=120)
            assert not writer.is_alive(), "another writer waited for the forward pass"
            return real(texts)

        monkeypatch.setattr(mem.internals.embedder, "encode", encode)
        assert mem.review_decide(item.id, "approve").applied
        assert landed
        assert all(mem.get(i, namespace=NS).status == "active" for i in landed)
        (summary,) = mem.search(namespace=NS, kinds=["summary"])
        assert summary.content.startswith(f"Summary of {len(BILLING)} memories")
        assert all(mem.get(i, namespace=NS).status == "archived" for i in sources)
        assert mem.audit_verify().intact
    finally:
        other.close()
        mem.close()
