"""Every labelled secret is refused, no benign sample is, injections are held, PII recorded."""

from __future__ import annotations

import pytest

from aide_memoire import Memory, SecretRefused

from .corpus import Sample, corpus

SAMPLES = corpus()


def test_corpus_is_large_and_varied() -> None:
    labels = {s.label for s in SAMPLES}
    assert len(SAMPLES) >= 200
    assert labels == {"secret", "clean", "injection", "pii", "no-pii"}
    kinds = {s.kind for s in SAMPLES if s.label == "secret"}
    assert len(kinds) >= 40


def _ids(samples: list[Sample]) -> list[str]:
    return [f"{s.label}-{s.kind or i}" for i, s in enumerate(samples)]


SECRETS = [s for s in SAMPLES if s.label == "secret"]


@pytest.mark.parametrize("sample", SECRETS, ids=_ids(SECRETS))
def test_every_secret_is_refused_without_echoing_it(mem: Memory, sample: Sample) -> None:
    with pytest.raises(SecretRefused) as caught:
        mem.store(sample.text, namespace="corpus")
    error = caught.value
    if sample.note == "provider format":
        assert error.kind == sample.kind
    # The message names the kind and the offset, never the secret (nor any long piece of it).
    assert f"character {error.offset}" in str(error)
    assert 0 <= error.offset < len(sample.text)
    for piece in sample.text.split():
        if len(piece) >= 12:
            assert piece not in str(error)
    assert mem.search(namespace="corpus") == []


def test_no_benign_sample_is_refused_or_held(mem: Memory) -> None:
    benign = [s for s in SAMPLES if s.label in ("clean", "pii", "no-pii")]
    ids = mem.store_many([{"content": s.text} for s in benign], namespace="corpus")
    held = [s.text for s, i in zip(benign, ids, strict=True)
            if mem.get(i, namespace="corpus").status != "active"]
    assert held == []


def test_every_injection_is_quarantined(mem: Memory) -> None:
    injections = [s for s in SAMPLES if s.label == "injection"]
    ids = [mem.store(s.text, namespace="corpus") for s in injections]
    statuses = {mem.get(i, namespace="corpus").status for i in ids}
    assert statuses == {"quarantined"}
    assert len(mem.review_queue(namespace="corpus", limit=1000)) == len(set(ids))


def test_pii_is_recorded_with_kind_and_span(mem: Memory) -> None:
    for sample in (s for s in SAMPLES if s.label == "pii"):
        memory_id = mem.store(sample.text, namespace="corpus")
        rows = mem.internals.db.conn().execute(
            "SELECT rule, start, end FROM memory_findings WHERE memory_id = ? "
            "AND category = 'pii'", (memory_id,)
        ).fetchall()
        assert sample.kind in {r[0] for r in rows}, sample.text
        assert mem.get(memory_id, namespace="corpus").content == sample.text  # stored as given
