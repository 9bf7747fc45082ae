"""Each grammar on a small fixture: names, kinds and line ranges of its definitions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire.engine.code.index import CodeIndex

from .conftest import open_index

FIXTURES = Path(__file__).parent / "fixtures"

# (file, qualified name, kind, start line, end line)
EXPECTED = [
    ("shapes.js", "addNumbers", "function", 4, 6),
    ("shapes.js", "scaleBy", "function", 8, 8),
    ("shapes.js", "Circle", "class", 10, 18),
    ("shapes.js", "Circle.area", "method", 15, 17),
    ("shapes.ts", "Shape", "interface", 1, 3),
    ("shapes.ts", "parseUserName", "function", 6, 8),
    ("shapes.ts", "Square", "class", 10, 16),
    ("shapes.ts", "Square.area", "method", 13, 15),
    ("shapes.go", "Rect", "struct", 4, 6),
    ("shapes.go", "Rect.Area", "method", 9, 11),
    ("shapes.go", "NewRect", "function", 14, 16),
    ("shapes.rs", "Point", "struct", 2, 5),
    ("shapes.rs", "Point.norm", "method", 9, 11),
    ("shapes.rs", "midpoint", "function", 14, 16),
    ("Shapes.java", "Triangle", "class", 4, 21),
    ("Shapes.java", "Triangle.Triangle", "constructor", 8, 11),
    ("Shapes.java", "Triangle.area", "method", 14, 16),
    ("Shapes.java", "Triangle.halfOf", "method", 18, 20),
    ("shapes.c", "buffer", "struct", 4, 7),
    ("shapes.c", "buffer_sum", "function", 10, 16),
    ("shapes.cpp", "geo", "namespace", 3, 19),
    ("shapes.cpp", "geo.Vertex", "class", 6, 13),
    ("shapes.cpp", "geo.Vertex.name", "method", 9, 9),
    ("shapes.cpp", "geo.countVertices", "function", 15, 17),
    ("shapes.cpp", "geo_reset", "function", 21, 21),
]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeIndex]:
    code = open_index(tmp_path_factory.mktemp("home"))
    report = code.index(FIXTURES)
    assert report.skipped == []
    yield code
    code.db.close()


def test_every_language_is_parsed_by_its_grammar(indexed: CodeIndex) -> None:
    report = indexed.index(FIXTURES)
    for language in ("javascript", "typescript", "go", "rust", "java", "c", "cpp"):
        assert report.parsers[language] == "tree-sitter", language
    assert report.unchanged == report.files and report.indexed == 0


@pytest.mark.parametrize(("path", "qualified", "kind", "start", "end"), EXPECTED)
def test_definition(
    indexed: CodeIndex, path: str, qualified: str, kind: str, start: int, end: int
) -> None:
    name = qualified.rsplit(".", 1)[-1]
    found = [
        h
        for h in indexed.symbol(FIXTURES, name)
        if h.role == "definition" and h.path == path and h.qualified_name == qualified
        and h.kind == kind
    ]
    assert len(found) == 1, indexed.symbol(FIXTURES, name)
    hit = found[0]
    assert (hit.start_line, hit.end_line) == (start, end)
    source_line = (FIXTURES / path).read_text().split("\n")[hit.start_line - 1]
    assert name in source_line or source_line.lstrip().startswith(("@", "export", "template"))


def test_doc_comments_are_searchable(indexed: CodeIndex) -> None:
    hits = indexed.search(FIXTURES, "distance from the origin")
    assert hits[0].name == "Point.norm" and hits[0].language == "rust"
    hits = indexed.search(FIXTURES, "rectangle", language="go")
    assert hits[0].name == "Rect"


def test_identifier_parts_match(indexed: CodeIndex) -> None:
    hits = indexed.search(FIXTURES, "parse user name")
    assert hits[0].name == "parseUserName"
    assert hits[0].location == "shapes.ts:6-8"
    hits = indexed.search(FIXTURES, "count vertices")
    assert hits[0].name == "geo.countVertices"


def test_language_filter(indexed: CodeIndex) -> None:
    hits = indexed.search(FIXTURES, "area", language="java", limit=20)
    assert hits and {h.language for h in hits} == {"java"}
