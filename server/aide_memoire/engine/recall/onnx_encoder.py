"""An ONNX Runtime copy of a sentence-transformers model: the same vectors, sooner.

The copy is exported on this machine from the model the user already has (torch and
``onnx`` do it once, in about two seconds) and kept in the model cache folder
(setting ``model_cache_dir``); nothing is downloaded. Encoding then needs only ``onnxruntime`` and
``tokenizers``: no torch import at start, and a faster forward pass on CPU.

``int8`` adds dynamic int8 quantisation of the weights: about twice as fast again, but
the vectors move (cosine to the float32 ones 0.98-1.0), so they form their own
embedding space and never mix with float32 ones.

Only models made of a Transformer, a mean or CLS Pooling and an optional Normalize are
exported; any other layout stays on sentence-transformers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...logs import get_logger

__all__ = ["PAD_SLACK", "OnnxEncoder", "Pooling", "cached_export", "length_groups", "pooling_of"]

log = get_logger(__name__)

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_EXPORT_VERSION = "2"
# How much padding a batch may carry, as a share of its real tokens: measured on LOCOMO
# turns in docs/benchmarks.md (ingest).
PAD_SLACK = 1.15
_WINDOW = 2048  # texts tokenised and sorted together


@dataclass(frozen=True)
class Pooling:
    mode: str  # "mean" or "cls"
    normalize: bool


def pooling_of(model_path: str | Path) -> Pooling | None:
    """The model's pooling if this module can reproduce it, else None."""
    root = Path(model_path)
    try:
        modules = json.loads((root / "modules.json").read_text())
        kinds = [str(m["type"]).rsplit(".", 1)[-1] for m in modules]
        if kinds[:2] != ["Transformer", "Pooling"] or kinds[2:] not in ([], ["Normalize"]):
            return None
        config = json.loads((root / modules[1]["path"] / "config.json").read_text())
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    modes = [k for k, v in config.items() if k.startswith("pooling_mode") and v is True]
    mode = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}.get(
        modes[0] if len(modes) == 1 else ""
    )
    if mode is None or not (root / "tokenizer.json").exists():
        return None
    return Pooling(mode=mode, normalize=kinds[2:] == ["Normalize"])


def _fingerprint(model_path: Path, int8: bool) -> str:
    """Changes when the model's files change, so a stale copy is never used."""
    parts = [_EXPORT_VERSION, str(model_path.resolve()), "int8" if int8 else "fp32"]
    for item in sorted(model_path.iterdir()):
        if item.is_file() and item.suffix in {".safetensors", ".bin", ".json"}:
            stat = item.stat()
            parts.append(f"{item.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def cached_export(
    model_path: str | Path, cache_dir: Path, *, int8: bool, name: str | None = None,
    on_export: Callable[[Path], None] | None = None,
) -> Path:
    """The ONNX file for the model, exported into ``cache_dir`` on first use.

    ``on_export(target)`` is called before an export (or a wait for another process's),
    so that a server can tell the person at the terminal why its first start is slow.
    """
    source = Path(model_path)
    label = name or source.name
    target = cache_dir / f"{label}-{_fingerprint(source, int8)}.onnx"
    if target.exists():
        return target
    if on_export is not None:
        on_export(target)
    cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    with _exclusive(cache_dir / ".export.lock"):  # several processes starting at once
        if target.exists():
            return target
        # A process killed mid-export leaves its ~90 MB temporary behind; holding the lock,
        # nobody else is writing one now.
        for stale in cache_dir.glob(f"{target.name}.*.tmp"):
            stale.unlink(missing_ok=True)
        temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        try:
            _export(source, temporary)
            if int8:
                _quantize(temporary)
            os.replace(temporary, target)  # atomic: readers see all of it or nothing
        finally:
            temporary.unlink(missing_ok=True)
    log.info("onnx_exported", model=label, int8=int8, path=str(target))
    return target


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """A cross-process lock where the platform has one (else the rename still keeps
    readers safe; two processes may then both export)."""
    with open(lock_path, "a+b") as handle:
        try:
            import fcntl
        except ImportError:  # Windows
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _export(source: Path, target: Path) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    with contextlib.suppress(ImportError, AttributeError):
        # Its "Loading weights" bar would land on the stderr of a server at a terminal,
        # which already says that the export runs.
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    model = SentenceTransformer(str(source), device="cpu")
    transformer: Any = model[0].auto_model
    transformer.eval()
    sample = model.tokenizer(["an example sentence"], return_tensors="pt")
    names = [name for name in _INPUTS if name in sample]

    class _Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, *inputs: Any) -> Any:
            return self.inner(**dict(zip(names, inputs, strict=True))).last_hidden_state

    axes = {name: {0: "batch", 1: "tokens"} for name in [*names, "hidden"]}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's tracer warnings are not ours
        torch.onnx.export(
            _Hidden(),
            tuple(sample[name] for name in names),
            str(target),
            input_names=names,
            output_names=["hidden"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )


def _quantize(path: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantized = path.with_name(path.name + ".int8")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            logging.disable(logging.WARNING)  # its advice goes to the root logger
            # Per-channel scales: cosine to float32 >= 0.98 on LOCOMO turns (per-tensor
            # scales drop to 0.90) at the same speed.
            quantize_dynamic(
                str(path), str(quantized), weight_type=QuantType.QInt8, per_channel=True
            )
        os.replace(quantized, path)
    finally:
        logging.disable(logging.NOTSET)
        quantized.unlink(missing_ok=True)


class OnnxEncoder:
    """Tokenise with ``tokenizers``, run the exported transformer, pool, normalise.

    ``per_text`` runs each text on its own: the int8 copy quantises its activations with
    one scale per call, so in a batch a text's vector would depend on its neighbours and
    their padding (cosine 0.975 between batchings); alone, a stored text gets the vector
    its query twin gets, at the same speed on 2 cores (docs/benchmarks.md).
    """

    def __init__(
        self, onnx_path: Path, model_path: str | Path, pooling: Pooling, *,
        max_seq_length: int, per_text: bool = False,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # One text's operators are too small to split: on 2 cores one thread encodes
        # LOCOMO turns one at a time faster in wall and CPU than two (which wake and wait
        # per operator), with bit-identical vectors (docs/benchmarks.md, "Issue 28,
        # round 9: ingest"). Batches (float32) still split.
        options.intra_op_num_threads = 1 if per_text else max(1, min(4, os.cpu_count() or 1))
        # Idle pool threads sleep instead of spinning: a spinning thread holds a core
        # the writing thread needs between batches (screen, facts, SQL) and that other
        # processes need on a shared machine. Same vectors; measured in docs/benchmarks.md.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only; warnings would reach stderr per call
        self.session = ort.InferenceSession(
            str(onnx_path), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.tokenizer = Tokenizer.from_file(str(Path(model_path) / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_seq_length)
        # Padding is done per group in _batch: the file's own setting (all-MiniLM's pads
        # every text to 128 tokens) would pad each text to that width.
        self.tokenizer.no_padding()
        pad_id = self.tokenizer.token_to_id(_pad_token(Path(model_path)))
        self.pad_id = pad_id if pad_id is not None else 0
        self.pooling = pooling
        self.per_text = per_text
        self.dim = int(self.encode(["dimension probe"], batch_size=1).shape[1])

    def encode(self, texts: list[str], *, batch_size: int) -> np.ndarray:
        """One unit vector per text, in order. Texts are tokenised once, sorted by token
        count and run in groups of similar length (see :func:`length_groups`): padding
        is most of the work of a mixed batch of short turns."""
        out: np.ndarray | None = None
        size = 1 if self.per_text else batch_size
        # Tokens of a window at a time: a 100k-row import must not hold 100k encodings.
        for first in range(0, len(texts), _WINDOW):
            encodings = self.tokenizer.encode_batch(texts[first : first + _WINDOW])
            for chosen in length_groups([len(e.ids) for e in encodings], size):
                vectors = self._batch([encodings[i] for i in chosen])
                if out is None:
                    out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
                out[[first + i for i in chosen]] = vectors
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)

    def _batch(self, encodings: list[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
            types[row, : len(e.ids)] = e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
        if self.pooling.mode == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        if self.pooling.normalize:
            pooled = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return np.ascontiguousarray(pooled, dtype=np.float32)


def length_groups(
    lengths: list[int], batch_size: int, *, slack: float = PAD_SLACK
) -> list[list[int]]:
    """Indices of ``lengths`` in batches of at most ``batch_size``, shortest first, each
    padded to at most ``slack`` times its real tokens (a longer text starts a new one)."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    groups: list[list[int]] = []
    current: list[int] = []
    real = 0
    for i in order:
        width = lengths[i]  # the longest so far: the order is ascending
        if current and (
            len(current) >= batch_size or width * (len(current) + 1) > slack * (real + width)
        ):
            groups.append(current)
            current, real = [], 0
        current.append(i)
        real += width
    if current:
        groups.append(current)
    return groups


def _pad_token(model_path: Path) -> str:
    try:
        special = json.loads((model_path / "special_tokens_map.json").read_text())
        pad = special.get("pad_token")
        return str(pad["content"] if isinstance(pad, dict) else pad or "[PAD]")
    except (OSError, ValueError):
        return "[PAD]"
