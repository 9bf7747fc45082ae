"""Index code that was not written for these tests: this project and the standard library.

Expected lines come from ``ast`` and ``inspect``, not from the indexer.
"""

from __future__ import annotations

import ast
import email.message
import email.utils
import inspect
import json
import json.decoder
import shutil
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

import aide_memoire
from aide_memoire import Memory
from aide_memoire.engine.code.index import CodeIndex

from .conftest import open_index

PACKAGE = Path(aide_memoire.__file__).parent
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def ast_definitions(root: Path) -> Iterator[tuple[str, str, int, int]]:
    """(relative path, qualified name, first line incl. decorators, last line) per def."""
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue  # a file being edited right now by someone else
        rel = path.relative_to(root).as_posix()
        stack: list[tuple[ast.AST, tuple[str, ...]]] = [(tree, ())]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    start = min([d.lineno for d in child.decorator_list] + [child.lineno])
                    qualified = (*prefix, child.name)
                    assert child.end_lineno is not None
                    yield rel, ".".join(qualified), start, child.end_lineno
                    stack.append((child, qualified))
                else:
                    stack.append((child, prefix))


def assert_all_found(code: CodeIndex, root: Path) -> int:
    expected = list(ast_definitions(root))
    assert expected
    # One lookup per name: the definitions sharing a name (every `__init__`) get the same
    # answer, and each lookup also gathers the name's references (most of its cost).
    places: dict[str, set[tuple[str, str | None, int, int]]] = {}
    missing = []
    for rel, qualified, start, end in expected:
        name = qualified.rsplit(".", 1)[-1]
        if name not in places:
            places[name] = {
                (h.path, h.qualified_name, h.start_line, h.end_line)
                for h in code.symbol(root, name, limit=1000)
                if h.role == "definition"
            }
        if (rel, qualified, start, end) not in places[name]:
            missing.append((rel, qualified, start, end))
    assert missing == []
    return len(expected)


@pytest.fixture(scope="module")
def stdlib(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeIndex]:
    code = open_index(tmp_path_factory.mktemp("home"))
    for folder in ("json", "email"):
        report = code.index(STDLIB / folder)
        assert report.indexed > 5 if folder == "email" else report.indexed >= 4
    yield code
    code.db.close()


def test_every_definition_of_this_project_is_found_at_its_lines(
    code: CodeIndex, tmp_path: Path
) -> None:
    # A snapshot: the tree may be edited while the tests run.
    package = Path(shutil.copytree(PACKAGE, tmp_path / "aide_memoire"))
    report = code.index(package)
    assert report.parsers["python"] == "tree-sitter"
    assert assert_all_found(code, package) > 100


def test_every_definition_of_stdlib_email_is_found(stdlib: CodeIndex) -> None:
    assert assert_all_found(stdlib, STDLIB / "email") > 300


@pytest.mark.parametrize(
    ("obj", "qualified"),
    [
        (json.dumps, "dumps"),
        (json.decoder.JSONDecoder.raw_decode, "JSONDecoder.raw_decode"),
        (json.JSONEncoder, "JSONEncoder"),
        (email.utils.parseaddr, "parseaddr"),
        (email.message.Message.get_payload, "Message.get_payload"),
    ],
)
def test_stdlib_symbol_at_inspect_lines(stdlib: CodeIndex, obj: object, qualified: str) -> None:
    source = Path(inspect.getsourcefile(obj))  # type: ignore[arg-type]
    lines, start = inspect.getsourcelines(obj)  # type: ignore[arg-type]
    folder = "json" if "json" in source.parts else "email"
    root = STDLIB / folder
    hits = stdlib.symbol(root, qualified)
    first = hits[0]
    assert first.role == "definition" and first.qualified_name == qualified
    assert first.path == source.relative_to(root).as_posix()
    assert first.start_line == start
    assert first.end_line == start + len(lines) - 1


def test_two_roots_do_not_mix(stdlib: CodeIndex) -> None:
    assert stdlib.symbol(STDLIB / "json", "parseaddr", limit=5) == []
    json_paths = {h.path for h in stdlib.search(STDLIB / "json", "decode", limit=50)}
    assert json_paths and json_paths <= {"__init__.py", "decoder.py", "encoder.py",
                                         "scanner.py", "tool.py"}


def test_search_finds_the_code_that_handles_a_topic(stdlib: CodeIndex) -> None:
    hits = stdlib.search(STDLIB / "email", "parse an email address", limit=5)
    assert any(h.name in ("parseaddr", "getaddress", "AddrlistClass.getaddress") for h in hits)
    hits = stdlib.search(STDLIB / "json", "JSONDecodeError", limit=3)
    assert hits[0].name == "JSONDecodeError"
    assert hits[0].path == "decoder.py"


def test_references_name_the_line(stdlib: CodeIndex) -> None:
    root = STDLIB / "json"
    refs = [h for h in stdlib.symbol(root, "JSONDecodeError") if h.role == "reference"]
    assert refs
    for ref in refs:
        line = (root / ref.path).read_text(encoding="utf-8").split("\n")[ref.line - 1]
        assert "JSONDecodeError" in line
        assert ref.start_line <= ref.line <= ref.end_line


def test_memory_facade(home: Path) -> None:
    with Memory(home) as memory:
        report = memory.code_index(STDLIB / "json")
        assert report.files >= 5
        hits = memory.code_search(STDLIB / "json", "scan a string literal")
        assert hits and hits[0].location.startswith(hits[0].path + ":")
        found = memory.code_symbol(STDLIB / "json", "loads")
        definitions = [h for h in found if h.role == "definition"]
        assert definitions[0].path == "__init__.py"
