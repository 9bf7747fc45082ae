"""Splitting one file into chunks along its syntax, with the symbols it defines.

A definition (function, method, class, ...) is one chunk spanning its lines. A
container's chunk (a class) keeps its own lines but only the signature lines of the
definitions nested in it, so that a method's text is indexed once, in its own chunk.
Code outside every definition (imports, module constants) becomes ``code`` chunks;
files without a grammar become overlapping line windows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .languages import METHOD_PARENTS, SPECS, Spec, parser_for

__all__ = ["Chunk", "Symbol", "chunk_file", "line_windows"]

WINDOW_LINES = 60
WINDOW_STEP = 50
GAP_LINES = 60
SIGNATURE_CHARS = 240
DOC_CHARS = 2000

_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_C_NAMES = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "destructor_name",
        "operator_name",
        "qualified_identifier",
    }
)
_COMMENT_MARKS = re.compile(r"^\s*(?:/\*\*?|\*/|\*|///?!?|#)\s?")
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")


@dataclass
class Symbol:
    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int
    signature: str


@dataclass
class Chunk:
    kind: str
    start_line: int
    end_line: int
    text: str
    name: str | None = None
    signature: str = ""
    doc: str = ""
    symbol: Symbol | None = None


@dataclass
class _Def:
    node: Any
    outer: Any
    kind: str
    name: str
    qualified: str
    start_row: int
    end_row: int
    sig_end_row: int
    doc_row: int
    signature: str
    doc: str
    children: list[_Def] = field(default_factory=list)


def _text(node: Any) -> str:
    return bytes(node.text).decode("utf-8", errors="replace")


def _end_row(node: Any) -> int:
    row: int = node.end_point[0]
    if node.end_point[1] == 0 and row > node.start_point[0]:
        row -= 1
    return row


def _c_name(node: Any) -> Any:
    """Follow C/C++ declarators (pointer, reference, function) down to the name."""
    while node is not None and node.type not in _C_NAMES:
        inner = node.child_by_field_name("declarator")
        if inner is None:  # reference_declarator has no field name for its child
            inner = next(
                (c for c in node.named_children if c.type.endswith("declarator")), None
            )
        node = inner
    return node


def _name_node(node: Any, spec: Spec) -> tuple[Any, str | None]:
    """The node naming a definition, and the kind when the node decides it."""
    kind: str | None = None
    if node.type in ("function_definition", "type_definition") and spec.name in ("c", "cpp"):
        return _c_name(node.child_by_field_name("declarator")), None
    if node.type == "impl_item":
        return node.child_by_field_name("type"), None
    if node.type == "type_spec":
        value = node.child_by_field_name("type")
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(
            value.type if value is not None else "", "type"
        )
    return node.child_by_field_name("name"), kind


def _accept(node: Any) -> bool:
    if node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        return value is not None and (value.type in _FUNCTION_VALUES or value.type == "class")
    if node.type in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
        return node.child_by_field_name("body") is not None
    return True


def _outer(node: Any, spec: Spec) -> Any:
    """Climb through wrappers (decorators, export, template) that hold only this definition."""
    while True:
        parent = node.parent
        if parent is None or parent.type not in spec.wrappers:
            return node
        if sum(1 for c in parent.named_children if c.type == node.type) != 1:
            return node
        node = parent


def _signature(node: Any) -> tuple[str, int]:
    target = node
    value = node.child_by_field_name("value")
    if value is not None and value.child_by_field_name("body") is not None:
        target = value
    body = target.child_by_field_name("body")
    raw = bytes(node.text)
    if body is not None and body.start_byte > node.start_byte:
        head = raw[: body.start_byte - node.start_byte]
        end_row = body.start_point[0]
        if body.start_point[1] == 0 or head.endswith(b"\n"):
            end_row -= 1
        end_row = max(end_row, node.start_point[0])
    else:
        head = raw.split(b"\n", 1)[0]
        end_row = node.start_point[0]
    text = " ".join(head.decode("utf-8", errors="replace").split()).rstrip("{:= ")
    return text[:SIGNATURE_CHARS], end_row


def _python_doc(node: Any) -> str:
    body = node.child_by_field_name("body")
    if body is None or not body.named_children:
        return ""
    first = body.named_children[0]
    if first.type != "expression_statement" or not first.named_children:
        return ""
    string = first.named_children[0]
    if string.type != "string":
        return ""
    return "".join(_text(c) for c in string.named_children if c.type == "string_content")


def _comment_doc(outer: Any, spec: Spec) -> tuple[str, int]:
    lines: list[str] = []
    row = outer.start_point[0]
    sibling = outer.prev_named_sibling
    while sibling is not None and sibling.type in spec.comments and _end_row(sibling) >= row - 1:
        raw = _text(sibling).split("\n")
        lines[:0] = [_COMMENT_MARKS.sub("", line).rstrip("*/ ") for line in raw]
        row = sibling.start_point[0]
        sibling = sibling.prev_named_sibling
    return "\n".join(line for line in lines if line).strip(), row


def _definitions(tree: Any, spec: Spec, lines: list[str]) -> list[_Def]:
    top: list[_Def] = []
    stack: list[tuple[Any, tuple[str, ...], _Def | None]] = [(tree.root_node, (), None)]
    while stack:
        node, prefix, parent = stack.pop()
        kind = spec.definitions.get(node.type)
        found: _Def | None = None
        if kind is not None and _accept(node):
            name_node, decided = _name_node(node, spec)
            if name_node is not None:
                found = _make_def(node, spec, kind, decided, name_node, prefix, parent, lines)
        if found is not None:
            (parent.children if parent else top).append(found)
            prefix, parent = tuple(found.qualified.split(".")), found
        children = node.named_children
        stack.extend((child, prefix, parent) for child in reversed(children))
    return top


def _make_def(
    node: Any,
    spec: Spec,
    kind: str,
    decided: str | None,
    name_node: Any,
    prefix: tuple[str, ...],
    parent: _Def | None,
    lines: list[str],
) -> _Def:
    raw = _TEMPLATE_ARGS.sub("", _text(name_node)).strip()
    parts = [p for p in re.split(r"::|\.", raw) if p] or [raw]
    name = parts[-1]
    qualifier = list(prefix) + parts[:-1]
    kind = decided or kind
    if node.type == "method_declaration" and spec.name == "go":
        receiver = node.child_by_field_name("receiver")
        found = re.findall(r"\w+", _text(receiver)) if receiver is not None else []
        qualifier = [found[-1]] if found else qualifier
    if node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        kind = "class" if value is not None and value.type == "class" else "function"
    if kind == "function" and (
        (parent is not None and parent.kind in METHOD_PARENTS) or len(parts) > 1
    ):
        kind = "method"
    outer = _outer(node, spec)
    end_row = _end_row(outer)
    if spec.name == "python":
        # A Python block has no closing token, so tree-sitter lets it run on over the
        # comments that follow its last statement; end where the code ends, as ast does.
        while end_row > outer.start_point[0] and lines[end_row].lstrip()[:1] in ("#", ""):
            end_row -= 1
    signature, sig_end = _signature(node)
    if spec.name == "python":
        doc, doc_row = _python_doc(node), outer.start_point[0]
    else:
        doc, doc_row = _comment_doc(outer, spec)
    return _Def(
        node=node,
        outer=outer,
        kind=kind,
        name=name,
        qualified=".".join([*qualifier, name]),
        start_row=outer.start_point[0],
        end_row=end_row,
        sig_end_row=sig_end,
        doc_row=doc_row,
        signature=signature,
        doc=doc[:DOC_CHARS],
    )


def _def_chunks(d: _Def, lines: list[str], out: list[Chunk]) -> None:
    keep = [True] * (d.end_row - d.start_row + 1)
    for child in d.children:
        for row in range(child.sig_end_row + 1, child.end_row + 1):
            if d.start_row <= row <= d.end_row:
                keep[row - d.start_row] = False
        _def_chunks(child, lines, out)
    # Nested bodies become empty lines, not gaps, so that a line of the text is still
    # start_line + offset (references report the exact line).
    text = "\n".join(
        lines[row] if keep[row - d.start_row] else ""
        for row in range(d.start_row, min(d.end_row + 1, len(lines)))
    )
    symbol = Symbol(d.name, d.qualified, d.kind, d.start_row + 1, d.end_row + 1, d.signature)
    out.append(
        Chunk(d.kind, d.start_row + 1, d.end_row + 1, text, d.qualified, d.signature, d.doc, symbol)
    )


def _gap_chunks(top: list[_Def], lines: list[str]) -> list[Chunk]:
    covered = [False] * len(lines)
    for d in top:
        for row in range(min(d.doc_row, d.start_row), min(d.end_row + 1, len(lines))):
            covered[row] = True
    out: list[Chunk] = []
    row = 0
    while row < len(lines):
        if covered[row]:
            row += 1
            continue
        start = row
        while row < len(lines) and not covered[row] and row - start < GAP_LINES:
            row += 1
        block = lines[start:row]
        if any(line.strip() for line in block):
            out.append(Chunk("code", start + 1, row, "\n".join(block)))
    return out


def line_windows(lines: list[str]) -> list[Chunk]:
    """Overlapping windows of lines, for files without a grammar."""
    out: list[Chunk] = []
    for start in range(0, max(len(lines), 1), WINDOW_STEP):
        block = lines[start : start + WINDOW_LINES]
        if any(line.strip() for line in block):
            out.append(Chunk("lines", start + 1, start + len(block), "\n".join(block)))
        if start + WINDOW_LINES >= len(lines):
            break
    return out


def chunk_file(text: str, language: str) -> tuple[list[Chunk], str]:
    """The chunks of one file, and the parser used: 'tree-sitter' or 'lines'."""
    lines = text.split("\n")
    spec = SPECS.get(language)
    parser = parser_for(language) if spec else None
    if spec is None or parser is None:
        return line_windows(lines), "lines"
    tree = parser.parse(text.encode("utf-8"))
    top = _definitions(tree, spec, lines)
    chunks: list[Chunk] = []
    for d in top:
        _def_chunks(d, lines, chunks)
    chunks.extend(_gap_chunks(top, lines))
    chunks.sort(key=lambda c: (c.start_line, -c.end_line))
    return chunks, "tree-sitter"
