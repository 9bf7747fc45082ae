from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import Memory


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One ONNX export of the dense model for the whole run, in its temp folder (not the
    user's cache); subprocesses inherit it through the environment."""
    folder = tmp_path_factory.mktemp("model-cache")
    previous = os.environ.get("AIDE_MEMOIRE_MODEL_CACHE_DIR")
    os.environ["AIDE_MEMOIRE_MODEL_CACHE_DIR"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("AIDE_MEMOIRE_MODEL_CACHE_DIR", None)
    else:
        os.environ["AIDE_MEMOIRE_MODEL_CACHE_DIR"] = previous


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    with Memory(home) as m:
        yield m


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
