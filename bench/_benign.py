"""Benign text nobody wrote for the screen's rules, read where it lies on this machine.

None of it is copied into the repository (other projects' text may not be; LOCOMO's
licence forbids it): each source is read at bench time from its own place, split into
paragraphs (blank-line separated, whitespace folded, at least 20 characters), and
de-duplicated. Sources:

- ``metadata``: the long descriptions in the METADATA of the Python packages installed
  in the project's venv (site-packages given on the command line or found from it);
- ``docstrings``: the module, class and function docstrings of Python's standard library
  (read with ``ast``, nothing imported; its ``test`` package left out: test data is
  written to provoke parsers);
- ``man``: the English manual pages under /usr/share/man (roff requests and font escapes
  removed), when present;
- ``locomo``: every turn of the LOCOMO dev conversations (a path on the command line);
- ``docs``: this project's own docs/ pages, except docs/trust.md, whose examples of
  attacks and secrets are there on purpose.
"""

from __future__ import annotations

import ast
import gzip
import json
import re
import sysconfig
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["SOURCES", "paragraphs"]

SOURCES = ("metadata", "docstrings", "man", "locomo", "docs")
_MIN_CHARS = 20


def _split(text: str) -> Iterator[str]:
    for block in re.split(r"\n\s*\n", text):
        block = block.strip()
        if len(block) >= _MIN_CHARS:
            yield block


def metadata(site_packages: Path) -> Iterator[str]:
    for path in sorted(site_packages.glob("*.dist-info/METADATA")):
        text = path.read_text(encoding="utf-8", errors="replace")
        _, _, body = text.partition("\n\n")  # headers end at the first blank line
        yield from _split(body)


def docstrings(stdlib: Path) -> Iterator[str]:
    for path in sorted(stdlib.rglob("*.py")):
        parts = path.relative_to(stdlib).parts
        if parts[0] in ("test", "site-packages", "idlelib", "lib2to3") or "tests" in parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    yield from _split(doc)


_ROFF_ESCAPE = re.compile(r"\\f(?:\[[^\]]*\]|\(..|.)|\\\(..|\\\[[^\]]*\]|\\[&|^,/-]|\\e|\\\*\S")


def _plain(line: str) -> str:
    """A roff text line as read: font and character escapes gone, ``\\-`` a hyphen."""
    return _ROFF_ESCAPE.sub("", line.replace("\\-", "-").replace("\\(aq", "'")).replace(
        "\\", "")


def man(root: Path) -> Iterator[str]:
    for path in sorted(root.glob("man[0-9]*/*")):
        try:
            raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        lines: list[str] = []
        for line in raw.decode("utf-8", errors="replace").splitlines():
            if line.startswith((".", "'")):
                request = line[1:3].strip().upper()
                if request in ("PP", "P", "LP", "SH", "SS", "TP", "IP", "SP", "BR", ""):
                    lines.append("")  # a paragraph break
                rest = line.split(None, 1)
                if request in ("B", "I", "BI", "IR", "BR", "RB", "IB", "RI") and len(rest) > 1:
                    lines.append(_plain(rest[1].replace('"', "")))
                continue
            lines.append(_plain(line))
        yield from _split("\n".join(lines))


def locomo(path: Path) -> Iterator[str]:
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        for key, turns in conversation.items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    text = str(turn.get("text", "")).strip()
                    if text:
                        yield text


def docs(root: Path) -> Iterator[str]:
    for path in sorted(root.glob("*.md")):
        if path.name != "trust.md":
            yield from _split(path.read_text(encoding="utf-8"))


def _unique(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        folded = " ".join(item.split())
        if folded not in seen:
            seen.add(folded)
            out.append(item)
    return out


def paragraphs(*, site_packages: Path | None, locomo_path: Path | None, docs_root: Path,
               man_root: Path = Path("/usr/share/man"),
               stdlib: Path | None = None) -> dict[str, list[str]]:
    """Each available source's paragraphs (a source that is not on this machine is
    left out, so a report always says which sources it read)."""
    out: dict[str, list[str]] = {}
    if site_packages is not None and site_packages.is_dir():
        out["metadata"] = _unique(metadata(site_packages))
    out["docstrings"] = _unique(docstrings(stdlib or Path(sysconfig.get_paths()["stdlib"])))
    if man_root.is_dir():
        out["man"] = _unique(man(man_root))
    if locomo_path is not None and locomo_path.is_file():
        out["locomo"] = _unique(locomo(locomo_path))
    if docs_root.is_dir():
        out["docs"] = _unique(docs(docs_root))
    return out
