"""The public surface and the import direction are decisions: a change here is deliberate."""

from __future__ import annotations

import ast
from pathlib import Path

import aide_memoire

PACKAGE = Path(aide_memoire.__file__).parent


def test_public_names() -> None:
    assert sorted(aide_memoire.__all__) == sorted(
        [
            "AideMemoireError",
            "AsyncMemory",
            "ForeignDatabase",
            "Hit",
            "ImportReport",
            "InvalidContent",
            "InvalidInput",
            "InvalidNamespace",
            "InvalidQuery",
            "Memory",
            "MemoryRecord",
            "ModelUnavailable",
            "NewerSchema",
            "NotFound",
            "PartMissing",
            "SecretRefused",
            "Settings",
            "Stage",
            "Status",
            "StoreError",
            "StoreFull",
            "__version__",
        ]
    )
    for name in aide_memoire.__all__:
        assert hasattr(aide_memoire, name), name


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            found.add("." * node.level + module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_engine_imports_nothing_from_mcp_or_cli() -> None:
    for path in (PACKAGE / "engine").rglob("*.py"):
        for name in _imports(path):
            stripped = name.lstrip(".")
            assert not stripped.startswith(
                ("mcp", "cli", "aide_memoire.mcp", "aide_memoire.cli")
            ), f"{path.relative_to(PACKAGE)} imports {name}"
            assert not (name.startswith("..") and stripped.split(".")[0] in {"mcp", "cli"}), (
                f"{path.relative_to(PACKAGE)} imports {name}"
            )
