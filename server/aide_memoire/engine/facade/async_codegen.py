"""Writes ``async_memory.py`` from ``memory.py``: ``AsyncMemory`` is derived, not restated.

Each public method of ``Memory`` gets an ``async`` twin with the very same parameters
(their source text, annotations and defaults copied from ``memory.py``'s syntax tree)
that runs the call in a worker thread; the members whose twin is not a plain call
(``aclose``, the actor, ``acting_as``, ``export_lines`` as a list, the static
``restore``) are written once in ``async_base.py``.
``tests/engine/test_structure.py`` fails when the file on disk is not what this writes::

    python -m aide_memoire.engine.facade.async_codegen \\
        > server/aide_memoire/engine/facade/async_memory.py
"""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from pathlib import Path

__all__ = ["main", "render"]

SOURCE = Path(__file__).with_name("memory.py")

# Members of Memory whose twin is written below by hand, not derived.
_OWN = {"close", "acting_as", "actor", "settings", "internals", "code", "export_lines",
        "restore", "warm"}

_DOC = '''"""``AsyncMemory``: the same engine for asyncio programs, each call in a worker thread.

Generated from ``memory.py`` by ``async_codegen.py`` (its docstring says how, and what
``async_base.py`` adds); do not edit.
"""

from __future__ import annotations

'''

_CLASS = '''
from .async_base import AsyncBase
from .memory import Memory

__all__ = ["AsyncMemory"]


class AsyncMemory(AsyncBase):
    """Async twin of :class:`Memory`; use ``async with``."""
'''


def _used(node: ast.Import | ast.ImportFrom, body: str) -> bool:
    names = [(a.asname or a.name).split(".")[0] for a in node.names]
    return any(re.search(rf"\b{re.escape(name)}\b", body) for name in names)


def _imports(tree: ast.Module, text: str, body: str) -> str:
    """memory.py's imports as written, those the twin's text names (its annotations name
    the same types); the TYPE_CHECKING block keeps its shape."""
    lines = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        if isinstance(node, ast.Import | ast.ImportFrom) and _used(node, body):
            lines.append(ast.get_source_segment(text, node) or "")
        elif isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            inner = ["    " + (ast.get_source_segment(text, n) or "") for n in node.body
                     if isinstance(n, ast.Import | ast.ImportFrom) and _used(n, body)]
            lines.append("\nif TYPE_CHECKING:\n" + "\n".join(inner))
    return "\n".join(lines) + "\n"


_TEXT: list[str] = []  # memory.py's source, for the expressions as they are written


def _written(node: ast.expr) -> str:
    return ast.get_source_segment(_TEXT[0], node) or ast.unparse(node)


def _parameter(arg: ast.arg, default: ast.expr | None) -> str:
    out = arg.arg
    if arg.annotation is not None:
        out += f": {_written(arg.annotation)}"
    if default is not None:
        out += f" = {_written(default)}"
    return out


def _twin(node: ast.FunctionDef) -> str:
    args = node.args
    positional = args.posonlyargs + args.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    params = [_parameter(a, d) for a, d in zip(positional, defaults, strict=True)]
    forward = [a.arg for a in positional[1:]]
    if args.vararg is not None:
        params.append("*" + _parameter(args.vararg, None))
        forward.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        params.append("*")
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(_parameter(arg, default))
        forward.append(f"{arg.arg}={arg.arg}")
    if args.kwarg is not None:
        params.append("**" + _parameter(args.kwarg, None))
        forward.append("**" + args.kwarg.arg)
    returns = _written(node.returns) if node.returns is not None else "None"
    doc = (ast.get_docstring(node) or "").split("\n\n")[0].replace("\n", " ")
    call = ", ".join([f"self.sync.{node.name}", *forward])
    lines = [
        "",
        f"    async def {node.name}(",
        *[f"        {p}," for p in params],
        f"    ) -> {returns}:",
    ]
    if doc:
        lines.append(textwrap.fill(f'"""{doc}"""', width=100, initial_indent=" " * 8,
                                   subsequent_indent=" " * 8, break_long_words=False))
    one = f"        return await self._run({call})"
    if len(one) <= 100:
        lines.append(one)
    else:
        lines += ["        return await self._run(",
                  textwrap.fill(call + ",", width=100, initial_indent=" " * 12,
                                subsequent_indent=" " * 12, break_long_words=False,
                                break_on_hyphens=False),
                  "        )"]
    return "\n".join(lines) + "\n"


def render() -> str:
    text = SOURCE.read_text()
    _TEXT[:] = [text]
    tree = ast.parse(text)
    (memory,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Memory"]
    twins = [
        _twin(node) for node in memory.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
        and node.name not in _OWN
        and not any(ast.unparse(d) in ("property", "staticmethod") or
                    ast.unparse(d).endswith(".setter") for d in node.decorator_list)
    ]
    body = _CLASS + "".join(twins)
    return _DOC + _imports(tree, text, body) + body


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":  # pragma: no cover - tests/engine/test_structure.py calls render()
    main()
