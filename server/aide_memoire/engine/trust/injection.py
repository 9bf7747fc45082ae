"""Suspected prompt injection or poisoning in text an agent will later read as memory.

High-confidence rules (injection_rules.py: orders to the agent to ignore, reveal, run or
exfiltrate, claims of authority, tool calls; hidden or bidirectional Unicode; chat or
tool-call markup) quarantine a write in ``enforce`` mode. Medium ones are recorded as
flags only. The rules read the normalised text and its loose form (normalize.py), and
findings carry offsets into the original. A match inside a quotation that the rest of
the sentence talks *about* ("the attacker wrote '...'") is downgraded to medium; quotes
alone around an order are not enough, or quoting would be a disguise.

Out of reach without a model: orders written in other languages than English, and
paraphrases that use none of the rules' words.
"""

from __future__ import annotations

import math
import re
import unicodedata

from .findings import Confidence, Finding
from .gate import LiteralGate
from .injection_lexicon import LEXICON_RULE, override_in_other_languages
from .injection_rules import INJECTION_RULES, MEDIUM_RULES, NEEDS
from .normalize import Normalized, loose, normalize

__all__ = ["INJECTION_RULES", "scan_injection", "size_anomaly"]

# Overrides and isolates (the "Trojan Source" characters). Plain direction marks (LRM,
# RLM, ALM) are ordinary in right-to-left text and are not flagged.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\u180e\ufeff\u00ad")
_QUOTES = "\"'“”‘’«»`"


# Words that make a quotation a mention: someone reports, tests or discusses the text.
_MENTION = re.compile(
    r"(?i)\b(?:said|says|wrote|writes|typed|posted|sent|phrase|string|text|message|payload|"
    r"attacks?|injections?|examples?|e\.g\.|such as|like|called|contains?|containing|patterns?|"
    r"detect\w*|block\w*|filter\w*|flag\w*|test\w*|regex|quoted?|reported|saw|seen|tried|"
    r"attempt\w*|classic|known|jailbreak|prompt|spam|phishing|warn\w*|rule|signature|"
    r"matches|matched|screen\w*|caught|red.team\w*|strings?|check\w*|look for|search\w*|grep)\b"
)
# Quoted spans on one line. A single quote opens only where no letter precedes it and
# closes only where no letter follows, so an apostrophe inside a word (don't, it's) is
# never a quote mark.
_QUOTATION = re.compile(
    "\"[^\"\n]+\"|\u201c[^\u201d\n]+\u201d|\u00ab[^\u00bb\n]+\u00bb|`[^`\n]+`|"
    "(?<![A-Za-z0-9])['\u2018](?:[^'\u2019\n]|(?<=[A-Za-z0-9])['\u2019](?=[A-Za-z0-9]))+"
    "['\u2019](?![A-Za-z0-9])"
)


def _quote_spans(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in _QUOTATION.finditer(text)]


def _quoted(text: str, spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """True when the span sits in a quotation that the rest of its line talks about."""
    for lo, hi in spans:
        if lo <= start and end <= hi:
            line_start = text.rfind("\n", 0, lo) + 1
            line_end = text.find("\n", hi)
            line_end = len(text) if line_end < 0 else line_end
            outside = text[line_start:lo] + " " + text[hi:line_end]
            return bool(_MENTION.search(outside))
    return False


_SUSPECT_CHARS = re.compile(
    "[\u00ad\u180e\u200b-\u200d\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
    "\ue000-\uf8ff\U000e0000-\U000e007f\U000f0000-\U0010ffff]"
)


def _unicode_findings(text: str, field: str) -> list[Finding]:
    found: list[Finding] = []
    invisible: list[int] = []
    private: list[int] = []
    if text.isascii():
        return found
    for match in _SUSPECT_CHARS.finditer(text):
        index, char = match.start(), match.group(0)
        code = ord(char)
        if 0xE0000 <= code <= 0xE007F:
            found.append(Finding("injection", "tag-characters", "hidden Unicode tag characters",
                                 index, index + 1, "high", field))
        elif char in _BIDI:
            found.append(Finding("injection", "bidi-control", "bidirectional control character",
                                 index, index + 1, "high", field))
        elif char in _INVISIBLE and not (index == 0 and char == "\ufeff"):
            # A zero-width joiner between emoji is ordinary text.
            if char == "\u200d" and _emoji_join(text, index):
                continue
            invisible.append(index)
        elif unicodedata.category(char) == "Co":
            private.append(index)  # icon fonts use these: a flag, never a hold
    if private:
        found.append(Finding("injection", "private-use-characters", "private-use characters",
                             private[0], private[-1] + 1, "medium", field))
    if invisible:
        confidence: Confidence = "high" if len(invisible) >= 3 else "medium"
        found.append(Finding("injection", "invisible-characters", "invisible characters",
                             invisible[0], invisible[-1] + 1, confidence, field))
    return _merge_runs(found)


def _emoji_join(text: str, index: int) -> bool:
    before = text[index - 1] if index else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    return bool(before and after) and ord(before) > 0x2000 and ord(after) > 0x2000


def _merge_runs(found: list[Finding]) -> list[Finding]:
    """One finding per run of the same rule, so evidence stays short."""
    merged: list[Finding] = []
    for finding in found:
        last = merged[-1] if merged else None
        if last and last.rule == finding.rule and finding.start <= last.end + 1:
            merged[-1] = Finding(last.category, last.rule, last.label, last.start,
                                 max(last.end, finding.end), last.confidence, last.field)
        else:
            merged.append(finding)
    return merged


_GATE = LiteralGate(INJECTION_RULES, [rule for rule, _, _ in INJECTION_RULES], NEEDS)
# The lexicon runs on non-ASCII text, or ASCII text with one of its Latin-script verbs.
_ASCII_LEXICON = re.compile(
    r"(?i)\b(?:ignor|oubli|olvid|esque|dimentic|vergiss|vergesst|negeer|vergeet|glem|ohita|"
    r"unohda|zignoruj|zapomnij|abaikan|lupakan|desconsider|trascura|missachte|haz caso|"
    r"no sigas|non seguire|bo qua|strunta)")

# A documented install line: "# On macOS and Linux.\ncurl -LsSf https://astral.sh/uv/install.sh
# | sh" in a README. It is held only when something else makes it an order: the words
# around it must present an installation (and not address the agent), the download must
# be over https from a named host. The same line alone, or in quotes, stays held.
_INSTALL_CONTEXT = re.compile(
    r"(?i)\binstall(?:s|ed|er|ing|ation)?\b|\bset ?up\b|\bget started\b|"
    r"\bon (?:macos|linux|windows|unix)\b|\b(?:specific|latest) version\b|"
    r"(?:^|\n)\s*(?:\$|>|PS>)\s|```")
_HTTPS_HOST = re.compile(
    r"(?i)https://(?!\d+\.\d+\.\d+\.\d+)[a-z0-9-]+(?:\.[a-z0-9-]+)+(?:[/\s\"']|$)")
_TO_AGENT = re.compile(
    r"(?i)\b(?:assistant|agent|ai|claude|llm|model|bot)\b|\byou\s+(?:must|should|need|have)\b|"
    r"\b(?:now|immediately|silently|quietly|secretly|without)\b")


def _documented_install(text: str, start: int, end: int) -> bool:
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    command = text[start:line_end]  # the URL may follow the match on its line
    around = text[:start] + " " + text[line_end:]  # the words presenting it, not the URL
    return bool(_HTTPS_HOST.search(command)) and bool(
        _INSTALL_CONTEXT.search(around)) and not _TO_AGENT.search(text)


def _rule_findings(norm: Normalized, field: str) -> list[Finding]:
    text = norm.text
    found: list[Finding] = []
    spans: list[tuple[int, int]] | None = None
    for rule, label, pattern in _GATE.rules(text.lower()):
        for match in pattern.finditer(text):
            start, end = norm.span(*match.span())
            confidence: Confidence = "high"
            if spans is None:
                spans = _quote_spans(norm.original)
            if rule in MEDIUM_RULES or _quoted(norm.original, spans, start, end) or (
                rule == "shell-payload" and _documented_install(norm.original, start, end)
            ):
                confidence = "medium"
            found.append(Finding("injection", rule, label, start, end, confidence, field))
    if not text.isascii() or _ASCII_LEXICON.search(text):
        spans = _quote_spans(norm.original) if spans is None else spans
        for lo, hi in override_in_other_languages(text):
            start, end = norm.span(lo, hi)
            confidence = "medium" if _quoted(norm.original, spans, start, end) else "high"
            found.append(Finding("injection", LEXICON_RULE, "order to ignore earlier "
                                 "instructions (another language)", start, end, confidence,
                                 field))
    return found


def scan_injection(text: str, *, field: str = "content") -> list[Finding]:
    """Suspected injection in ``text``, by position in ``text``."""
    found = _unicode_findings(text, field)
    strict = normalize(text)
    rules = _rule_findings(strict, field)
    relaxed = loose(strict)
    if relaxed.text != strict.text:
        seen = {(f.rule, f.start) for f in rules}
        rules += [f for f in _rule_findings(relaxed, field) if (f.rule, f.start) not in seen]
    found += rules
    found.sort(key=lambda f: (f.start, f.end))
    return found


def size_anomaly(length: int, count: int, mean_log: float, sd_log: float) -> Finding | None:
    """A text far larger than the namespace's history (log-length z-score and ratio)."""
    if count < 20 or length < 2000:
        return None
    log_length = math.log(length)
    ratio = math.exp(log_length - mean_log)
    z = (log_length - mean_log) / max(sd_log, 0.25)
    if ratio >= 10 and z >= 4:
        confidence: Confidence = "high" if ratio >= 30 else "medium"
        return Finding("injection", "abnormal-size",
                       f"text {ratio:.0f}x larger than usual in this namespace",
                       0, length, confidence)
    return None
