"""Put one server entry into a client's config file, text in and text out, losing nothing
else: the file's other entries, its order and layout, and its comments where the format
has them.

- JSON and JSONC (VS Code, Zed, Gemini CLI and OpenCode allow ``//`` and ``/* */``
  comments and trailing commas): the file is read with its comments and trailing commas
  blanked out (same offsets), and only the text of our entry is inserted or replaced; every
  other byte stays where it was. A file that is plain JSON for a client that takes only
  JSON is refused if it has comments (the client could not read it either).
- TOML (Codex CLI): ``tomlkit``, which keeps comments and layout.

``merge`` never writes: ``setup`` decides what to do with the new text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["ConfigError", "Format", "Merged", "merge"]

_DECODER = json.JSONDecoder()

Format = Literal["json", "jsonc", "toml"]


class ConfigError(ValueError):
    """The existing file cannot take the entry (it does not parse, or a key on the way is
    not a table); the message names the problem. Nothing is written."""


@dataclass(frozen=True)
class Merged:
    text: str
    # "added", "updated" (an entry of that name was there, different) or "unchanged".
    action: str
    previous: Any = None


def merge(text: str, fmt: Format, path: tuple[str, ...], name: str,
          entry: dict[str, Any]) -> Merged:
    """``text`` with ``entry`` at ``path`` + ``name`` (the containers made if missing).
    A byte-order mark and Windows line endings (editors on Windows write both) are kept."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    crlf = "\r\n" in text
    body = text[len(bom):].replace("\r\n", "\n")
    if fmt == "toml":
        merged = _merge_toml(body, path, name, entry)
    else:
        merged = _merge_json(body, path, name, entry, comments=fmt == "jsonc")
    if merged.action == "unchanged":
        return Merged(text, merged.action, merged.previous)
    out = bom + (merged.text.replace("\n", "\r\n") if crlf else merged.text)
    return Merged(out, merged.action, merged.previous)


# --- TOML ---------------------------------------------------------------------------

def _merge_toml(text: str, path: tuple[str, ...], name: str, entry: dict[str, Any]) -> Merged:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigError(f"it is not valid TOML ({exc})") from None
    table: Any = doc
    for key in path:
        if key not in table:
            table[key] = tomlkit.table(is_super_table=True)
        table = table[key]
        if not isinstance(table, dict):
            raise ConfigError(f"'{key}' is not a table")
    previous = table[name].unwrap() if name in table else None
    if previous == entry:
        return Merged(text, "unchanged", previous)
    item = tomlkit.table()
    for key, value in entry.items():
        if isinstance(value, dict):  # env = { ... } on one line, as clients' docs show it
            inline = tomlkit.inline_table()
            inline.update(value)
            item[key] = inline
        else:
            item[key] = value
    table[name] = item
    return Merged(tomlkit.dumps(doc), "added" if previous is None else "updated", previous)


# --- JSON and JSONC ---------------------------------------------------------------------

def _blank(text: str, *, comments: bool) -> str:
    """``text`` with comments and trailing commas turned into spaces (newlines kept), so
    that it parses as JSON with every offset unchanged."""
    out = list(text)
    commas: list[int] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if ch == "/" and i + 1 < n and text[i + 1] in "/*":
            if not comments:
                line = text.count("\n", 0, i) + 1
                raise ConfigError(f"line {line} has a comment, which this client's JSON "
                                  "does not allow")
            end = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2)
            end = n if end < 0 else (end if text[i + 1] == "/" else end + 2)
            for j in range(i, end):
                if out[j] != "\n":
                    out[j] = " "
            i = end
            continue
        if ch == ",":
            commas.append(i)
        i += 1
    if comments:
        blanked = "".join(out)
        for at in commas:
            rest = blanked[at + 1:].lstrip()
            if rest[:1] in ("}", "]"):
                out[at] = " "
    return "".join(out)


@dataclass(frozen=True)
class _Member:
    key: str
    value_start: int
    value_end: int


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _members(text: str, start: int) -> tuple[list[_Member], int]:
    """The members of the object whose ``{`` is at ``start``, and the offset of its ``}``."""
    members: list[_Member] = []
    i = _skip(text, start + 1)
    if text[i] == "}":
        return members, i
    while True:
        key, i = _DECODER.raw_decode(text, i)
        i = _skip(text, _skip(text, i) + 1)  # past the colon
        _, end = _DECODER.raw_decode(text, i)
        members.append(_Member(key, i, end))
        i = _skip(text, end)
        if text[i] == "}":
            return members, i
        i = _skip(text, i + 1)  # past the comma


def _line_indent(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    line = text[line_start:at]
    return line[:len(line) - len(line.lstrip(" \t"))]


def _unit(text: str) -> str:
    """The file's indentation step (two spaces when it shows none)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[:len(line) - len(stripped)]
    return "  "


def _dump(value: Any, indent: str, unit: str) -> str:
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)


def _merge_json(text: str, path: tuple[str, ...], name: str, entry: dict[str, Any], *,
                comments: bool) -> Merged:
    if not text.strip():
        nested: dict[str, Any] = {name: entry}
        for key in reversed(path):
            nested = {key: nested}
        return Merged(json.dumps(nested, indent=2, ensure_ascii=False) + "\n", "added")
    blanked = _blank(text, comments=comments)
    try:
        json.loads(blanked)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"it is not valid JSON (line {exc.lineno}, column {exc.colno}: "
                          f"{exc.msg})") from None
    start = _skip(blanked, 0)
    if blanked[start] != "{":
        raise ConfigError("its top level is not an object")
    unit = _unit(text)
    keys = (*path, name)
    for depth, key in enumerate(keys):
        members, close = _members(blanked, start)
        found = next((m for m in members if m.key == key), None)
        inner = _line_indent(text, start) + unit
        if found is None:  # insert the rest of the way as the object's first member
            value: Any = entry
            for rest in reversed(keys[depth + 1:]):
                value = {rest: value}
            member = f"{json.dumps(key, ensure_ascii=False)}: {_dump(value, inner, unit)}"
            if members:
                new = f"{text[:start + 1]}\n{inner}{member},{text[start + 1:]}"
            else:
                outer = _line_indent(text, start)
                new = f"{text[:start + 1]}\n{inner}{member}\n{outer}{text[close:]}"
            return Merged(new, "added")
        if depth == len(keys) - 1:
            previous = json.loads(blanked[found.value_start:found.value_end])
            if previous == entry:
                return Merged(text, "unchanged", previous)
            new = (text[:found.value_start] + _dump(entry, _line_indent(text, found.value_start),
                                                   unit) + text[found.value_end:])
            return Merged(new, "updated", previous)
        if blanked[found.value_start] != "{":
            raise ConfigError(f"'{key}' is not an object")
        start = found.value_start
    raise AssertionError("unreachable: the loop returns at the last key")
