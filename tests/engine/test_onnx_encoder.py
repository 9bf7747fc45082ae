"""The ONNX Runtime copy of the dense model: same vectors as sentence-transformers, cached
export, int8 as its own space, and a clear refusal for layouts it cannot reproduce."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.embed import PACKAGED_MODEL, Embedder, resolve_model
from aide_memoire.engine.errors import ModelUnavailable
from aide_memoire.engine.onnx_encoder import pooling_of

TEXTS = [
    "On 8 May 2023, Caroline said: I went to a LGBTQ support group yesterday.",
    "The deploy script lives in ops/deploy.sh and needs the staging token.",
    "short",
    "Melanie painted a sunrise over the lake last weekend, with her kids watching. " * 5,
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


def test_float32_onnx_vectors_equal_the_torch_ones(cache: Path) -> None:
    torch_side = Embedder(PACKAGED_MODEL, backend="torch")
    onnx_side = Embedder(PACKAGED_MODEL, backend="onnx", cache_dir=cache)
    expected, got = torch_side.encode(TEXTS), onnx_side.encode(TEXTS)
    assert onnx_side.runtime == "onnx" and torch_side.runtime == "torch"
    assert got.shape == expected.shape == (len(TEXTS), 384)
    assert float(np.abs(got - expected).max()) < 1e-4
    # Same vectors, same space: a store can switch runtimes without re-encoding.
    assert onnx_side.space == torch_side.space


def test_export_is_made_once_and_reused(cache: Path) -> None:
    Embedder(PACKAGED_MODEL, backend="onnx", cache_dir=cache).wait()
    files = sorted(cache.glob("*.onnx"))
    stamps = [f.stat().st_mtime_ns for f in files]
    again = Embedder(PACKAGED_MODEL, backend="onnx", cache_dir=cache, batch_size=3)
    assert again.encode(TEXTS[:1]).shape == (1, 384)
    assert sorted(cache.glob("*.onnx")) == files
    assert [f.stat().st_mtime_ns for f in files] == stamps
    assert not list(cache.glob("*.tmp"))


def test_int8_is_its_own_space_and_close_to_float32(cache: Path) -> None:
    full = Embedder(PACKAGED_MODEL, backend="onnx", cache_dir=cache)
    small = Embedder(PACKAGED_MODEL, int8=True, cache_dir=cache)
    a, b = full.encode(TEXTS), small.encode(TEXTS)
    assert small.runtime == "onnx-int8"
    assert small.space is not None and full.space is not None
    assert small.space.key != full.space.key and small.space.model.endswith("+int8")
    cosines = (a * b).sum(axis=1)
    assert float(cosines.min()) > 0.95
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)


def _copy_with_modules(tmp_path: Path, modules: list[dict[str, object]]) -> Path:
    source = Path(resolve_model(PACKAGED_MODEL))
    target = tmp_path / "odd-model"
    shutil.copytree(source, target)
    (target / "modules.json").write_text(json.dumps(modules))
    return target


def test_a_layout_it_cannot_reproduce_is_refused_or_left_to_torch(tmp_path: Path) -> None:
    layers = [("", "Transformer"), ("1_Pooling", "Pooling"), ("2_Dense", "Dense")]
    odd = _copy_with_modules(
        tmp_path,
        [
            {"idx": i, "name": str(i), "path": path, "type": f"sentence_transformers.models.{t}"}
            for i, (path, t) in enumerate(layers)
        ],
    )
    assert pooling_of(odd) is None
    assert pooling_of(resolve_model(PACKAGED_MODEL)) is not None
    forced = Embedder(str(odd), backend="onnx", cache_dir=tmp_path / "cache")
    assert not forced.wait()
    assert forced.error is not None and "Transformer + mean/CLS Pooling" in forced.error
    with pytest.raises(ModelUnavailable, match="ONNX encoder cannot run"):
        forced.encode(["x"])


def test_memory_status_names_the_runtime(tmp_path: Path, cache: Path) -> None:
    settings = Settings(home=tmp_path / "home", model_cache_dir=cache, embedding_backend="onnx")
    with Memory(settings=settings) as memory:
        memory.store("The staging database moved to eu-west-2 in March.", namespace="ops")
        hits = memory.recall("where is the staging database now", namespace="ops")
        assert hits and "dense" in hits[0].scores
        dense = next(s for s in memory.status().stages if s.name == "dense")
    assert dense.live and "onnx" in dense.detail
