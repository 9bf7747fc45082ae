"""The ONNX Runtime copy of the dense model: same vectors as sentence-transformers, cached
export, int8 as its own space, and a clear refusal for layouts it cannot reproduce."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.core.errors import ModelUnavailable
from aide_memoire.engine.recall.embed import PACKAGED_MODEL, Embedder, resolve_model
from aide_memoire.engine.recall.onnx_encoder import OnnxEncoder, cached_export, pooling_of

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


# Of many lengths, as a conversation's turns are, plus one past the 256-token cut.
MIXED = [
    *TEXTS,
    "ok",
    "Yes!",
    "On 3 June 2023, Jon said: the dance studio finally opened, come by on Friday?",
    "def parse(line: str) -> dict[str, int]:\n    return {k: int(v) for k, v in pairs(line)}",
    "Nate told me he had been reading about turtles, gaming tournaments and a new "
    "coconut milk ice cream recipe he wants to try with friends this summer. " * 3,
    "word " * 400,
]


def _encoder(cache: Path, *, int8: bool) -> OnnxEncoder:
    path = resolve_model(PACKAGED_MODEL)
    pooling = pooling_of(path)
    assert pooling is not None
    onnx_path = cached_export(path, cache, int8=int8, name=PACKAGED_MODEL)
    return OnnxEncoder(onnx_path, path, pooling, max_seq_length=256, per_text=int8)


def test_float32_vectors_do_not_depend_on_how_a_batch_is_cut(cache: Path) -> None:
    encoder = _encoder(cache, int8=False)
    # The reference: the whole batch padded to its longest text in one run.
    whole = encoder._batch(encoder.tokenizer.encode_batch(MIXED))
    for batch_size in (1, 3, 16):
        got = encoder.encode(MIXED, batch_size=batch_size)
        assert got.shape == whole.shape == (len(MIXED), 384)
        assert float(np.abs(got - whole).max()) < 1e-5


def test_texts_past_one_tokenising_window_keep_their_order(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = _encoder(cache, int8=False)
    expected = encoder.encode(MIXED, batch_size=16)
    monkeypatch.setattr("aide_memoire.engine.recall.onnx_encoder._WINDOW", 3)
    got = encoder.encode(MIXED, batch_size=16)
    assert float(np.abs(got - expected).max()) < 1e-5


def test_a_text_past_the_cut_is_truncated_as_sentence_transformers_does(cache: Path) -> None:
    long = [MIXED[-1], "a short one beside it"]
    expected = Embedder(PACKAGED_MODEL, backend="torch").encode(long)
    got = _encoder(cache, int8=False).encode(long, batch_size=16)
    assert float(np.abs(got - expected).max()) < 1e-4


def test_an_int8_vector_depends_on_its_text_alone(cache: Path) -> None:
    encoder = _encoder(cache, int8=True)
    together = encoder.encode(MIXED, batch_size=16)
    for index, text in enumerate(MIXED):
        alone = encoder.encode([text], batch_size=16)[0]
        assert float(np.abs(together[index] - alone).max()) < 1e-6
    # Through the Embedder too: a stored text and the same text as a query agree.
    embedder = Embedder(PACKAGED_MODEL, int8=True, cache_dir=cache)
    assert float(np.abs(embedder.encode(MIXED)[4] - embedder.encode([MIXED[4]])[0]).max()) < 1e-6


def test_the_int8_copy_runs_on_one_thread_with_the_vectors_of_two(cache: Path) -> None:
    """One text at a time, one intra-op thread (faster on 2 cores): the same bits as the
    session splitting each operator over two, so no stored vector moves."""
    import onnxruntime as ort

    encoder = _encoder(cache, int8=True)
    assert encoder.session.get_session_options().intra_op_num_threads == 1
    one = encoder.encode(MIXED, batch_size=16)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    onnx_path = cached_export(resolve_model(PACKAGED_MODEL), cache, int8=True,
                              name=PACKAGED_MODEL)
    encoder.session = ort.InferenceSession(str(onnx_path), options,
                                           providers=["CPUExecutionProvider"])
    assert np.array_equal(encoder.encode(MIXED, batch_size=16), one)


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
