from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import Memory

# The one PostgreSQL server of a session, for every folder that runs on both backends.
from .pg_fixtures import pg_server  # noqa: F401

# The fast tier (`make test-fast`, `pytest -m "not slow"`) leaves out what spawns real
# clients and servers (PostgreSQL included), loads models other than through the shared
# keyword-only stores, or runs load and crash scenarios. `make test` still runs everything.
SLOW_MODULES = {
    "code/test_dense.py", "code/test_real_code.py",
    "engine/test_concurrency.py", "engine/test_lifecycle_of_memory.py",
    "engine/test_onnx_encoder.py", "engine/test_rerank.py", "engine/test_recall_hybrid.py",
    "engine/test_mirror.py", "facts/test_gliner.py", "facts/test_knowledge_updates.py",
    "lifecycle/test_scenario.py", "lifecycle/test_near_duplicates.py",
    "mcp/test_claude_code.py", "mcp/test_concurrency.py", "mcp/test_http.py",
    "mcp/test_real_clients.py", "mcp/test_bundle.py", "mcp/test_resources_stdio.py",
    "mcp/test_stdio.py", "mcp/test_namespace.py", "ops/test_crash.py", "ops/test_load.py",
    "ops/test_full.py", "plugin/test_claude_code.py", "plugin/test_launcher.py",
    "plugin/test_files.py", "test_contracts.py", "trust/test_corpus.py",
    # Stores opened with the real model (first load exports it) or a writer process:
    "engine/test_bad_input.py", "engine/test_memory.py", "engine/test_conversation.py",
    "engine/test_pipeline.py", "ops/test_doctor.py", "ops/test_snapshot.py",
    "ops/test_doctor_model.py", "postgres/test_adopt_backends.py",
    # Real server processes: the tests are about the process's own stdio and stderr.
    "mcp/test_stdio_faults.py", "mcp/test_serve_messages.py",
    # The CLI and the server as processes in the second, keyword-only environment.
    "test_keyword_install.py",
    # Writer processes SIGKILLed under load, on an encrypted store.
    "encryption/test_load_crash.py",
}
SLOW_TESTS = {
    "test_documented_commands_run_as_documented",  # a new user's shell, the real model
    "test_several_processes_indexing_one_tree",  # several processes at once
    # Stores opened with the real model (tests/engine/storage/test_store_size.py):
    "test_one_memory_with_its_vector_is_under_200_kb",
    "test_each_new_namespace_costs_kilobytes_not_megabytes",
    "test_recall_with_the_model",  # tests/postgres: the real model on each backend
}
# Module fixtures elsewhere that open a store with the real model.
DENSE_FIXTURES = {"scattered", "hybrid", "ops_notes"}
_TESTS = Path(__file__).resolve().parent


def _fast_tier(config: pytest.Config) -> bool:
    return " ".join(str(config.getoption("markexpr", "")).split()) == "not slow"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In the fast tier, a slow module is not even imported: importing some of them loads
    torch and sentence-transformers (seconds of CPU) only for their tests to be
    deselected."""
    if not _fast_tier(config) or collection_path.suffix != ".py":
        return None
    try:
        module = collection_path.resolve().relative_to(_TESTS).as_posix()
    except ValueError:
        return None
    return True if module in SLOW_MODULES else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = item.path.resolve().relative_to(_TESTS).as_posix()
        # The root `memory` fixture opens a store with the real dense model.
        defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        dense = any(d.baseid == "" for d in defs.get("memory", ())) or bool(
            DENSE_FIXTURES & set(defs))
        # Parametrised stores named "hybrid" (tests/facts) are the real model's.
        params = getattr(getattr(item, "callspec", None), "params", {})
        hybrid = any(isinstance(value, str) and value == "hybrid" for value in params.values())
        # A real PostgreSQL server (tests/postgres), its own process: the tests that use it
        # directly or run on the "postgres" side of a backend parameter. Their SQLite side
        # stays in the fast tier.
        postgres = "pg_server" in getattr(item, "fixturenames", ()) or any(
            isinstance(value, str) and value == "postgres" for value in params.values())
        name = getattr(item, "originalname", item.name)
        if module in SLOW_MODULES or name in SLOW_TESTS or dense or hybrid or postgres:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One ONNX export of the dense model for the whole run, in its temp folder (not the
    user's cache); subprocesses inherit it through the environment. Under pytest-xdist
    (`make test`) the workers share one folder beside their own temp folders: the export
    takes a lock (engine/recall/onnx_encoder.py), so the first worker to need it exports
    it and the others wait for it instead of each spending minutes of CPU on a copy."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tmp_path_factory.getbasetemp().parent / "model-cache"
        folder.mkdir(exist_ok=True)
    else:
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
