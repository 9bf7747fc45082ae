"""The re-ranker stage, driven through the real CrossEncoder code path with a tiny model
built here from a config (random weights: this checks plumbing, not quality)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.recall.embed import PACKAGED_MODEL, resolve_model

NOTES = [
    "The billing service moved from PostgreSQL to SQLite in March.",
    "Alice prefers tabs over spaces in every Python file.",
    "The staging database lives in eu-west-2.",
    "Deploys run from ops/deploy.sh with the staging token.",
    "Bruno fixed a memory leak in the ingest queue by capping its length.",
    "Our standups are short and start at 9:30.",
    "The search index is rebuilt every night at 02:00 UTC.",
    "Dana owns the checkout rate-limiter since 2023.",
    "Kafka replaced RabbitMQ for the notifications pipeline.",
    "The data lake keeps raw events for 90 days.",
    "Feature flags are preferred over long-lived branches.",
    "The gateway returns 429 when the rate limit is hit.",
]
QUERY = "which database does billing use now"


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from transformers import BertConfig, BertForSequenceClassification

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    source = Path(resolve_model(PACKAGED_MODEL))
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(source / name, folder / name)
    config = BertConfig(  # type: ignore[call-arg]  # num_labels: a PretrainedConfig kwarg
        vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64, num_labels=1,
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder


def _probabilities(folder: Path, texts: list[str]) -> dict[str, float]:
    import torch
    from sentence_transformers import CrossEncoder

    model = CrossEncoder(str(folder), device="cpu", local_files_only=True)
    logits = model.predict(
        [(QUERY, t) for t in texts], activation_fn=torch.nn.Identity(), show_progress_bar=False
    )
    return {t: 1 / (1 + math.exp(-float(x))) for t, x in zip(texts, logits, strict=True)}


def _memory(tmp_path: Path, **settings: object) -> Memory:
    return Memory(settings=Settings(home=tmp_path / "home", **settings))  # type: ignore[arg-type]


def test_reranked_hits_follow_the_cross_encoder(tmp_path: Path, cross_encoder: Path) -> None:
    expected = _probabilities(cross_encoder, NOTES)
    with _memory(tmp_path, reranker_model=str(cross_encoder), rerank_floor=0.0) as memory:
        memory.store_many([{"content": n} for n in NOTES], namespace="ops")
        hits = memory.recall(QUERY, namespace="ops", limit=len(NOTES))
        stage = next(s for s in memory.status().stages if s.name == "rerank")
    assert stage.live and str(cross_encoder) in stage.detail
    assert len(hits) == len(NOTES)
    assert all("rerank" in h.scores for h in hits)
    got = [h.scores["rerank"] for h in hits]
    # In order of the cross-encoder's probability; two notes it scores equal to float
    # noise (1e-10 apart, seen once) may come in either order.
    assert all(a >= b - 1e-9 for a, b in zip(got, got[1:], strict=False))
    for hit in hits:
        assert hit.scores["rerank"] == pytest.approx(expected[hit.content], abs=1e-5)
    # Ranks follow the cross-encoder's order, but for the same float-noise ties.
    ranks = [h.ranks["rerank"] for h in hits]
    assert sorted(ranks) == list(range(1, len(NOTES) + 1))
    for (rank_a, score_a), (rank_b, score_b) in zip(zip(ranks, got, strict=True),
                                                    zip(ranks[1:], got[1:], strict=True),
                                                    strict=False):
        assert rank_a < rank_b or abs(score_a - score_b) <= 1e-9, (ranks, got)


def test_the_floor_drops_unsure_hits_and_scales_with_the_limit(
    tmp_path: Path, cross_encoder: Path
) -> None:
    expected = _probabilities(cross_encoder, NOTES)
    ordered = sorted(expected.values())
    base = (ordered[len(ordered) // 2] + ordered[-1]) / 2  # some survive at limit 10
    with _memory(tmp_path, reranker_model=str(cross_encoder), rerank_floor=base) as memory:
        memory.store_many([{"content": n} for n in NOTES], namespace="ops")
        at_10 = {h.content for h in memory.recall(QUERY, namespace="ops", limit=10)}
        at_20 = {h.content for h in memory.recall(QUERY, namespace="ops", limit=20)}
    assert at_10 == {t for t, p in expected.items() if p >= base}
    assert at_20 == {t for t, p in expected.items() if p >= base / 2}
    assert at_10 < at_20 or at_10 == at_20 == set(NOTES)


def test_a_missing_reranker_is_reported_and_recall_goes_on(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with _memory(tmp_path, reranker_model=str(missing)) as memory:
        memory.store_many([{"content": n} for n in NOTES], namespace="ops")
        hits = memory.recall(QUERY, namespace="ops", limit=3)
        stage = next(s for s in memory.status().stages if s.name == "rerank")
    assert hits and all("rerank" not in h.scores for h in hits)
    assert not stage.live and str(missing) in stage.detail and "does not exist" in stage.detail
