"""bench/ scripts loaded as modules by the tests that check their rules: bench/ is not a
package, its scripts import their helpers (``_common``, ``_bulk``) as top-level modules."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench(script: str) -> ModuleType:
    """``bench/<script>.py`` as a fresh module named ``<script>_under_test``."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"{script}_under_test", BENCH / f"{script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module
