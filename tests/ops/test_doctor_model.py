"""doctor with the model on, as installed: the int8 ONNX space (``<model>+int8``) is the
default, and a fresh store written with it is healthy; its advice (reembed) mends it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from aide_memoire import Memory, Settings
from aide_memoire.engine.recall.embed import PACKAGED_MODEL


def _doctor_cli(home: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "AIDE_MEMOIRE_EMBEDDING_MODEL"}
    out = subprocess.run(
        [sys.executable, "-m", "aide_memoire.cli.main", "--home", str(home), "doctor", "--json"],
        env=env, capture_output=True, text=True, timeout=600,
    )
    report: dict[str, object] = json.loads(out.stdout)
    assert (out.returncode == 0) == bool(report["healthy"]), out.stderr
    return report


def test_a_fresh_default_store_with_the_model_is_healthy(home: Path) -> None:
    settings = Settings(home=home)  # the defaults: packaged model, int8 ONNX
    assert settings.embedding_model == PACKAGED_MODEL and settings.embedding_int8
    with Memory(settings=settings) as memory:
        for i, topic in enumerate(["billing", "search", "gateway", "ledger", "auth"]):
            memory.store(f"ticket OPS-{i}: the {topic} service needs a restart", namespace="d")
        memory.store_conversation([{"speaker": "A", "content": "is the gateway up?"},
                                   {"speaker": "B", "content": "yes since noon"}],
                                  namespace="d")
        space = memory.internals.embedder.space
        assert space is not None and space.model == f"{PACKAGED_MODEL}+int8"
    # A new Memory has not loaded the model: doctor must not guess the space's name.
    with Memory(settings=settings) as memory:
        assert memory.internals.embedder.space is None
        report = memory.doctor()
        assert report.healthy, [c for c in report.checks if not c.ok]
        missing = next(c for c in report.checks if c.name == "vector_missing")
        assert missing.detail.startswith("0 of 7 rows") and "+int8" in missing.detail
    assert _doctor_cli(home)["healthy"] is True


def test_the_doctors_advice_mends_missing_vectors(home: Path) -> None:
    settings = Settings(home=home)
    with Memory(settings=settings) as memory:
        ids = [memory.store(f"note {i} on the release checklist", namespace="d")
               for i in range(6)]
        assert memory.internals.embedder.space is not None
        table = memory.internals.tables.table_name(memory.internals.embedder.space)
        with memory.internals.db.write() as tx:  # vectors lost (an interrupted import, a bug)
            tx.execute(f"DELETE FROM {table} WHERE rowid IN "
                       "(SELECT rowid FROM memories WHERE id IN (?, ?))", (ids[0], ids[3]))
    report = _doctor_cli(home)
    assert report["healthy"] is False
    checks = {c["name"]: c for c in report["checks"]}  # type: ignore[attr-defined]
    assert checks["vector_missing"]["detail"].startswith("2 of 6 rows")
    assert "reembed" in checks["vector_missing"]["detail"]
    env = {k: v for k, v in os.environ.items() if k != "AIDE_MEMOIRE_EMBEDDING_MODEL"}
    done = subprocess.run(
        [sys.executable, "-m", "aide_memoire.cli.main", "--home", str(home), "reembed"],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert _doctor_cli(home)["healthy"] is True
