"""Languages: file extensions, tree-sitter grammar loading, and what a definition is.

Grammars come from the per-language wheels (tree-sitter-python, ...), which ship
compiled parsers: nothing is fetched at run time. A language whose wheel is missing
falls back to line windows, and the index report says so.

Each ``Spec`` maps syntax node types to symbol kinds. Names are read from the node's
``name`` field unless ``naming`` in chunk.py knows better (C declarators, Go receivers,
Rust impl blocks).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EXTENSIONS", "SPECS", "TEXT_LANGUAGES", "Spec", "detect", "parser_for"]

# A function defined directly inside one of these is a method.
METHOD_PARENTS = frozenset({"class", "struct", "interface", "trait", "impl", "enum", "union"})


@dataclass(frozen=True)
class Spec:
    name: str
    module: str
    function: str = "language"
    definitions: Mapping[str, str] = field(default_factory=dict)
    # Wrappers whose start line (decorators, `export`, `template<>`) begins the range.
    wrappers: frozenset[str] = frozenset()
    comments: frozenset[str] = frozenset({"comment"})


_JS_DEFS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "method",
    "variable_declarator": "function",  # only when its value is a function (chunk.py)
}
_TS_DEFS = {
    **_JS_DEFS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
    "function_signature": "function",
}
_C_DEFS = {
    "function_definition": "function",
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
    "type_definition": "type",
}

SPECS: dict[str, Spec] = {
    "python": Spec(
        "python",
        "tree_sitter_python",
        definitions={"function_definition": "function", "class_definition": "class"},
        wrappers=frozenset({"decorated_definition"}),
    ),
    "javascript": Spec(
        "javascript",
        "tree_sitter_javascript",
        definitions=_JS_DEFS,
        wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration"}),
    ),
    "typescript": Spec(
        "typescript",
        "tree_sitter_typescript",
        "language_typescript",
        definitions=_TS_DEFS,
        wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration"}),
    ),
    "tsx": Spec(
        "tsx",
        "tree_sitter_typescript",
        "language_tsx",
        definitions=_TS_DEFS,
        wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration"}),
    ),
    "go": Spec(
        "go",
        "tree_sitter_go",
        definitions={
            "function_declaration": "function",
            "method_declaration": "method",
            "type_spec": "type",
        },
        wrappers=frozenset({"type_declaration"}),
    ),
    "rust": Spec(
        "rust",
        "tree_sitter_rust",
        definitions={
            "function_item": "function",
            "function_signature_item": "function",
            "struct_item": "struct",
            "enum_item": "enum",
            "union_item": "union",
            "trait_item": "trait",
            "impl_item": "impl",
            "mod_item": "module",
            "macro_definition": "macro",
            "type_item": "type",
        },
        comments=frozenset({"line_comment", "block_comment"}),
    ),
    "java": Spec(
        "java",
        "tree_sitter_java",
        definitions={
            "class_declaration": "class",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "class",
            "annotation_type_declaration": "interface",
            "method_declaration": "method",
            "constructor_declaration": "constructor",
        },
        comments=frozenset({"line_comment", "block_comment"}),
    ),
    "c": Spec("c", "tree_sitter_c", definitions=_C_DEFS),
    "cpp": Spec(
        "cpp",
        "tree_sitter_cpp",
        definitions={
            **_C_DEFS,
            "class_specifier": "class",
            "namespace_definition": "namespace",
        },
        wrappers=frozenset({"template_declaration"}),
    ),
}

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".hxx": "cpp", ".h++": "cpp", ".ipp": "cpp", ".inl": "cpp",
}  # fmt: skip

# Other text files are indexed as line windows under these names.
TEXT_LANGUAGES: dict[str, str] = {
    ".md": "markdown", ".rst": "rst", ".txt": "text", ".toml": "toml", ".yaml": "yaml",
    ".yml": "yaml", ".json": "json", ".ini": "ini", ".cfg": "ini", ".sh": "shell",
    ".bash": "shell", ".zsh": "shell", ".html": "html", ".htm": "html", ".css": "css",
    ".scss": "css", ".sql": "sql", ".xml": "xml", ".rb": "ruby", ".php": "php",
    ".kt": "kotlin", ".swift": "swift", ".cs": "csharp", ".lua": "lua", ".pl": "perl",
    ".r": "r", ".scala": "scala", ".vue": "vue", ".svelte": "svelte",
}  # fmt: skip


def detect(name: str) -> str:
    """The language of a file from its name; 'text' when nothing more is known."""
    lower = name.lower()
    dot = lower.rfind(".")
    ext = lower[dot:] if dot > 0 else ""
    if ext in EXTENSIONS:
        return EXTENSIONS[ext]
    if lower in ("makefile", "dockerfile"):
        return lower
    return TEXT_LANGUAGES.get(ext, "text")


@functools.cache
def _grammar(language: str) -> Any | None:
    spec = SPECS.get(language)
    if spec is None:
        return None
    try:
        import tree_sitter

        grammar = importlib.import_module(spec.module)
        return tree_sitter.Language(getattr(grammar, spec.function)())
    except (ImportError, AttributeError, ValueError):
        return None


def parser_for(language: str) -> Any | None:
    """A new tree-sitter parser for ``language`` (parsers are not shared between threads),
    or None when its grammar is not installed."""
    grammar = _grammar(language)
    if grammar is None:
        return None
    import tree_sitter

    return tree_sitter.Parser(grammar)
