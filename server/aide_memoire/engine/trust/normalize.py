"""One normalisation step for every screen: text as a reader sees it, with a map back.

An attacker hides a secret or an order from a pattern by changing how it is written, not
what it says: HTML entities, URL escapes, full-width or mathematical letters, Cyrillic
and Greek lookalikes, zero-width characters and soft hyphens inside a word. ``normalize``
undoes all of those. ``loose`` goes further, for injection matching only: leetspeak
digits, letters spaced out one by one, and markdown emphasis inside words.

Every step is a regular-expression substitution, so unchanged text is copied in slices
and each output character keeps the span of original text it came from: a finding in
normalised text maps back to the original offsets with ``Normalized.span``.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

__all__ = ["HOMOGLYPHS", "INVISIBLE", "Normalized", "loose", "normalize", "unescape_json_spaces"]

# Characters that render as nothing (zero-width, soft hyphen, word joiners, BOM), the
# bidirectional overrides and the Unicode tag block: dropped before matching.
INVISIBLE = frozenset(
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200d\u200e\u200f"
    "\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069"
    "\u3164\ufeff\uffa0"
) | frozenset(chr(c) for c in range(0xE0000, 0xE0080))

# Cyrillic, Greek and a few Latin-extension letters that render like a Latin letter.
_CONFUSABLE_PAIRS = (
    "аa вb сc еe һh іi јj кk мm нh оo рp ԛq ѕs тt уy хx ԝw ӏl ɡg "
    "АA ВB СC ЕE НH ІI ЈJ КK МM ОO РP ЅS ТT УY ХX ԜW Ԛq "
    "αa βb γy εe ηn ιi κk νv οo ρp τt υu χx ωw "
    "ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX "
    "ıi ȷj ʟl ɑa ɩi ꞇt ǀl"
)
HOMOGLYPHS = {pair[0]: pair[1] for pair in _CONFUSABLE_PAIRS.split()}

_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?")
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_NON_ASCII_WORD = re.compile(r"[^\W\d_]*[^\x00-\x7f][^\W\d_]*|[^\x00-\x7f]")
# JSON and shell escapes of a newline or tab inside a value ("-----BEGIN...\\nMIIE").
_ESCAPED_SPACE = re.compile(r"\\[nrt]")

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t",
                       "@": "a", "$": "s", "!": "i", "|": "l"})
# A word that mixes letters with leet stand-ins ("4p1", "1gn0r3").
_LEET_WORD = re.compile(r"(?<![\w@$!|])(?=[\w@$!|]*[A-Za-z])"
                        r"(?=[\w@$!|]*[013457@$!|])[A-Za-z013457@$!|]{3,}(?![\w@$!|])")
# A one- or two-digit stand-in between words ("This 15 the admin"): only inside a sentence.
_LEET_SHORT = re.compile(r"(?<=[A-Za-z] )[013457]{1,2}(?= [A-Za-z])")
# Four or more single letters spaced out by one separator: "i g n o r e", "i.g.n.o.r.e".
_SPACED = re.compile(r"(?<![\w])(?:[A-Za-z](?:[ .\-_*]|\s{1,2})){3,}[A-Za-z](?!\w)")
# Emphasis marks inside a word ("ig**no**re") or around one ("_ignore_"); an underscore
# inside a word is an identifier ("im_start") and stays.
_EMPHASIS = re.compile(r"(?<=\w)[*~`]+(?=\w)|(?<![\w*~`])[*_~`]+(?=\w)|(?<=\w)[*_~`]+(?![\w*~`])")
_STARS = re.compile(r"\*+")  # bold and italic marks anywhere, even around "~/.aws"
_BLANKS = re.compile(r"[ \t\u00a0]{2,}")


@dataclass(frozen=True)
class Normalized:
    """Normalised ``text``; ``starts[i]:ends[i]`` is the original span of character i."""

    original: str
    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    @property
    def changed(self) -> bool:
        return self.text != self.original

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of ``text[start:end]``."""
        if not self.text:
            return 0, len(self.original)
        start = min(max(start, 0), len(self.text) - 1)
        end = min(max(end, start + 1), len(self.text))
        return self.starts[start], self.ends[end - 1]


def _identity(text: str) -> Normalized:
    return Normalized(text, text, tuple(range(len(text))), tuple(range(1, len(text) + 1)))


def _substitute(
    norm: Normalized, pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str]
) -> Normalized:
    """Apply ``replace`` to each match; replacement characters share the match's span."""
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    cursor = 0
    text = norm.text
    touched = False
    for match in pattern.finditer(text):
        new = replace(match)
        if new == match.group(0):
            continue
        touched = True
        lo, hi = match.span()
        pieces.append(text[cursor:lo])
        starts.extend(norm.starts[cursor:lo])
        ends.extend(norm.ends[cursor:lo])
        if new:
            origin_start = norm.starts[lo] if lo < len(text) else len(norm.original)
            origin_end = norm.ends[hi - 1] if hi > lo else origin_start
            pieces.append(new)
            starts.extend([origin_start] * len(new))
            ends.extend([origin_end] * len(new))
        cursor = hi
    if not touched:
        return norm
    pieces.append(text[cursor:])
    starts.extend(norm.starts[cursor:])
    ends.extend(norm.ends[cursor:])
    return Normalized(norm.original, "".join(pieces), tuple(starts), tuple(ends))


def _entity(match: re.Match[str]) -> str:
    decoded = html.unescape(match.group(0))
    return decoded if decoded != match.group(0) and decoded.isprintable() else match.group(0)


def _percent(match: re.Match[str]) -> str:
    decoded = unquote(match.group(0), errors="strict") if _utf8(match.group(0)) else ""
    if not decoded or not all(c.isprintable() or c in "\n\t" for c in decoded):
        return match.group(0)
    return decoded


def _utf8(escaped: str) -> bool:
    try:
        bytes.fromhex(escaped.replace("%", "")).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _fold_word(match: re.Match[str]) -> str:
    """NFKC each character, drop invisible ones, fold lookalikes in a word that mixes
    scripts or is made only of lookalikes (so Russian or Greek words stay themselves)."""
    word = "".join(c for c in match.group(0) if c not in INVISIBLE)
    word = unicodedata.normalize("NFKC", word)
    letters = [c for c in word if c.isalpha()]
    latin = any(c.isascii() for c in letters)
    if letters and (latin or all(c in HOMOGLYPHS for c in letters)):
        word = "".join(HOMOGLYPHS.get(c, c) for c in word)
    return word


def normalize(text: str) -> Normalized:
    """Entities and URL escapes decoded, NFKC, invisible characters dropped, lookalikes
    folded; the form secrets and injection are both matched on."""
    norm = _identity(text)
    if "&" in text:
        norm = _substitute(norm, _ENTITY, _entity)
    if "%" in norm.text:
        norm = _substitute(norm, _PERCENT, _percent)
    if not norm.text.isascii():
        norm = _substitute(norm, _NON_ASCII_WORD, _fold_word)
    return norm


def loose(norm: Normalized) -> Normalized:
    """``norm`` with markdown emphasis, spaced-out letters and leetspeak undone: a form
    for matching words of an order, never for secrets (it rewrites digits)."""
    out = _substitute(norm, _STARS, lambda m: "")
    out = _substitute(out, _EMPHASIS, lambda m: "")
    out = _substitute(out, _SPACED, _unspace)
    out = _substitute(out, _LEET_WORD, lambda m: m.group(0).translate(_LEET))
    out = _substitute(out, _LEET_SHORT, lambda m: m.group(0).translate(_LEET))
    return _substitute(out, _BLANKS, lambda m: " ")


def _unspace(match: re.Match[str]) -> str:
    # A wider gap (two blanks) between spaced letters marks a word boundary.
    words = re.split(r"\s{2,}|\s?[.\-_*]\s?[.\-_*]\s?", match.group(0))
    return " ".join(re.sub(r"[^A-Za-z]", "", w) for w in words)


def unescape_json_spaces(norm: Normalized) -> Normalized:
    """Literal ``\\n`` escapes as newlines: a PEM block pasted as a JSON string value."""
    if "\\" not in norm.text:
        return norm
    return _substitute(norm, _ESCAPED_SPACE, lambda m: "\n")
