"""Prose pages in the code index: Markdown and reStructuredText split by section.

A section (a heading and the text up to the next heading of any level) is one chunk,
named by its heading trail (``Page title > Section > Subsection``), so that the heading's
words weigh like a function's name in BM25. Text before the first heading is the page's
``intro`` chunk. A section longer than ``SECTION_LINES`` is cut into parts of that many
lines, each under the same name. Links and front matter are read on the way and stored
beside the chunks (CODE_DOCS_SQL); links are resolved when they are asked for, since
their targets change with other files.

Fenced code blocks are part of their section's text, but a ``#`` line inside one is not a
heading. reStructuredText headings are the title-over/underline form; its links are the
``text <target>`_`` form and ``:doc:`` roles. That covers what Sphinx projects write most.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field

from .chunk import Chunk

__all__ = [
    "DOC_LANGUAGES", "DocLinkRef", "DocPage", "SECTION_LINES", "all_links", "front_matter",
    "headings", "is_external", "links_in", "prose_lines",
    "parse_page", "slug",
]

DOC_LANGUAGES = frozenset({"markdown", "rst"})
SECTION_LINES = 80
TRAIL = " > "

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```+|~~~+)")
_RST_RULE = re.compile(r"^([=\-`:'\"~^_*+#<>])\1{2,}\s*$")
# [text](target "title"), not an image; [[Page]] / [[Page#h|alias]]; [ref]: target
_MD_LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^\"']*[\"'])?\s*\)")
_WIKI_LINK = re.compile(r"(?<!!)\[\[([^\]|#\n]*)(?:#([^\]|\n]*))?(?:\|([^\]\n]*))?\]\]")
_MD_REF = re.compile(r"^ {0,3}\[([^\]\n]+)\]:\s*<?(\S+?)>?(?:\s+.*)?$")
_RST_LINK = re.compile(r"`([^`<\n]*?)\s*<([^>`\n]+)>`__?")
_RST_DOC = re.compile(r":doc:`(?:[^`<]*<)?([^`>]+)>?`")
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_RST_LITERAL = re.compile(r"``.*?``")
_EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


@dataclass(frozen=True)
class DocLinkRef:
    """A link as written in a page: where, its text, target and anchor (not resolved)."""

    line: int
    text: str
    target: str
    anchor: str
    style: str  # markdown, wiki, reference, rst


@dataclass
class DocPage:
    title: str
    front_matter: dict[str, object]
    chunks: list[Chunk]
    links: list[DocLinkRef]
    anchors: list[str] = field(default_factory=list)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub and most renderers make it: lower case, punctuation
    dropped, spaces to hyphens."""
    text = unicodedata.normalize("NFKC", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _scalar(raw: str) -> object:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    if raw.startswith("[") and raw.endswith("]"):
        return [str(_scalar(p)) for p in raw[1:-1].split(",") if p.strip()]
    return raw


def front_matter(lines: list[str]) -> tuple[dict[str, object], int]:
    """The YAML front matter between ``---`` lines at the top (flat keys, scalars and
    lists: what page front matter holds), and how many lines it spans (0 if none).

    A small reader on purpose: a YAML library is not a dependency of the base install,
    and a page's metadata is flat in practice. Nested values are kept as their text.
    """
    if not lines or lines[0].strip() != "---":
        return {}, 0
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return {}, 0
    out: dict[str, object] = {}
    key: str | None = None
    for line in lines[1:end]:
        item = re.match(r"^\s+-\s+(.*)$", line) or re.match(r"^-\s+(.*)$", line)
        if item and key is not None:
            current = out.get(key)
            values = current if isinstance(current, list) else []
            values.append(str(_scalar(item.group(1))))
            out[key] = values
            continue
        pair = re.match(r"^([A-Za-z0-9_][\w\- ]*):\s*(.*)$", line)
        if pair:
            key = pair.group(1).strip()
            out[key] = _scalar(pair.group(2)) if pair.group(2).strip() else ""
        elif key is not None and line.strip():  # a nested or folded value: keep its text
            out[key] = f"{out[key]} {line.strip()}".strip()
    return out, end + 1


def links_in(line: str, number: int, language: str) -> list[DocLinkRef]:
    """The links of one line of a page."""
    found: list[DocLinkRef] = []
    # Inline code is no link: `[text](path)` in backticks documents the syntax.
    line = (_RST_LITERAL if language == "rst" else _CODE_SPAN).sub(" ", line)
    if language == "rst":
        for m in _RST_LINK.finditer(line):
            target, _, anchor = m.group(2).strip().partition("#")
            found.append(DocLinkRef(number, m.group(1).strip(), target, anchor, "rst"))
        for m in _RST_DOC.finditer(line):
            found.append(DocLinkRef(number, m.group(1), m.group(1).strip(), "", "rst-doc"))
        return found
    ref = _MD_REF.match(line)
    if ref:
        target, _, anchor = ref.group(2).partition("#")
        return [DocLinkRef(number, ref.group(1), target, anchor, "reference")]
    for m in _WIKI_LINK.finditer(line):
        text = (m.group(3) or m.group(1) or m.group(2) or "").strip()
        found.append(DocLinkRef(number, text, m.group(1).strip(), (m.group(2) or "").strip(),
                                "wiki"))
    for m in _MD_LINK.finditer(line):
        target, _, anchor = m.group(2).partition("#")
        found.append(DocLinkRef(number, m.group(1).strip(), target, anchor, "markdown"))
    return found


def is_external(target: str) -> bool:
    """A URL (``https:``, ``mailto:``...), not a path in the tree."""
    return bool(_EXTERNAL.match(target)) and not re.match(r"^[a-zA-Z]:[\\/]", target)


def prose_lines(lines: list[str], start: int = 0) -> Iterator[int]:
    """The indexes of the lines from ``start`` that are outside fenced code blocks."""
    fence: str | None = None
    for i in range(start, len(lines)):
        marker = _FENCE.match(lines[i])
        if marker:
            mark = marker.group(1)[0] * 3
            fence = None if fence == mark else (fence or mark)
            continue
        if not fence:
            yield i


def all_links(lines: list[str], language: str, start: int = 0) -> list[DocLinkRef]:
    """Every link of a page's lines from ``start`` (1-based line numbers), not in code."""
    return [ref for i in prose_lines(lines, start) for ref in links_in(lines[i], i + 1, language)]


def headings(lines: list[str], language: str, start: int) -> list[tuple[int, int, str]]:
    """(line index, level, text) of each heading; fenced code is skipped."""
    out: list[tuple[int, int, str]] = []
    rst_levels: list[str] = []
    for i in prose_lines(lines, start):
        line = lines[i]
        if language == "markdown":
            m = _ATX.match(line)
            if m and m.group(2):
                out.append((i, len(m.group(1)), m.group(2).strip()))
            elif i > start and line.strip() and set(line.strip()) <= {"=", "-"} \
                    and lines[i - 1].strip() and not _ATX.match(lines[i - 1]) \
                    and len(line.strip()) >= 2 and (not out or out[-1][0] != i - 1):
                out.append((i - 1, 1 if line.strip()[0] == "=" else 2, lines[i - 1].strip()))
        elif _RST_RULE.match(line) and i > start and lines[i - 1].strip() \
                and not _RST_RULE.match(lines[i - 1]) and len(line.rstrip()) >= len(
                    lines[i - 1].rstrip()):
            over = i >= 2 and _RST_RULE.match(lines[i - 2]) is not None
            style = ("o" if over else "u") + line.strip()[0]
            if style not in rst_levels:
                rst_levels.append(style)
            # An over-lined title's section starts at its over-line.
            out.append((i - 2 if over else i - 1, rst_levels.index(style) + 1,
                        lines[i - 1].strip()))
    return out


def parse_page(text: str, language: str, rel: str) -> DocPage:
    """Sections, links, anchors and front matter of one Markdown or RST page."""
    lines = text.split("\n")
    meta, body_start = front_matter(lines) if language == "markdown" else ({}, 0)
    heads = headings(lines, language, body_start)
    stem = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    title = str(meta.get("title") or "") or next(
        (h for _, level, h in heads if level == 1), "") or (heads[0][2] if heads else stem)
    # Where each section's text starts: an underlined heading's rule line is the heading's.
    starts = [(i, level, h) for i, level, h in heads]
    chunks: list[Chunk] = []
    trail: list[tuple[int, str]] = []
    bounds = [(body_start, 0, "")] + starts
    doc = f"{title} ({rel})"
    for n, (begin, level, heading) in enumerate(bounds):
        end = bounds[n + 1][0] if n + 1 < len(bounds) else len(lines)
        if level:
            trail = [(lv, h) for lv, h in trail if lv < level] + [(level, heading)]
        names = [h for _, h in trail]
        if names and names[0] != title:
            names = [title, *names]
        name = TRAIL.join(names) if level else f"{title}{TRAIL}intro" if begin < end else ""
        block = lines[begin:end]
        if not any(line.strip() for line in block):
            continue
        kind = "section" if level else "intro"
        for part in range(0, len(block), SECTION_LINES):
            piece = block[part : part + SECTION_LINES]
            if not any(line.strip() for line in piece):
                continue
            chunks.append(Chunk(
                kind, begin + part + 1, begin + part + len(piece), "\n".join(piece),
                name=name or title, signature=heading if level else "", doc=doc,
            ))
    anchors = [slug(h) for _, _, h in heads]
    return DocPage(title, meta, chunks, all_links(lines, language, body_start), anchors)
