"""Suspected prompt injection or poisoning in text an agent will later read as memory.

High-confidence rules (orders to the agent to ignore, reveal, run or exfiltrate; hidden
or bidirectional Unicode; chat or tool-call markup) quarantine a write in ``enforce``
mode. Medium ones are recorded as flags only. A phrase inside quotes is someone talking
*about* an injection, so it is downgraded to medium.
"""

from __future__ import annotations

import math
import re
import unicodedata

from .findings import Confidence, Finding

__all__ = ["INJECTION_RULES", "scan_injection", "size_anomaly"]

_YOU = r"(?:you|the (?:assistant|agent|ai|model|llm)|assistant|agent|ai|claude|chatgpt)"
_PRIOR = r"(?:all |any |the |your |of (?:the |your )?)?(?:previous|prior|above|earlier|preceding|" \
    r"former|original|existing|system|developer)"
_RULES_WORD = r"(?:instructions?|prompts?|rules|directions|directives|guidelines|context|" \
    r"messages|orders|constraints|guardrails|policies)"
_SECRET_THING = r"(?:system prompt|hidden prompt|initial prompt|instructions|api keys?|" \
    r"secrets?|credentials|passwords?|tokens?|private keys?|env(?:ironment)? variables|" \
    r"\.env|memories|memory store|conversation history|chat history)"
_TARGET = r"(?:https?://\S+|\S+@\S+\.\w+|(?:my|this|the following|our|an?) (?:server|url|" \
    r"endpoint|webhook|address|email|site|domain))"

INJECTION_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (rule, label, re.compile(pattern, re.IGNORECASE))
    for rule, label, pattern in (
        ("ignore-instructions", "order to ignore earlier instructions",
         rf"\b(?:ignore|disregard|forget|override|bypass|skip|drop)\s+(?:all\s+)?{_PRIOR}\s+"
         rf"(?:\w+\s+){{0,2}}{_RULES_WORD}"),
        ("ignore-everything", "order to ignore earlier instructions",
         r"\b(?:ignore|disregard|forget) (?:everything|all) (?:you (?:were|have been) told|"
         r"(?:said |written )?(?:above|before|so far))"),
        ("new-identity", "attempt to replace the agent's role",
         rf"\b(?:from now on,? {_YOU} (?:are|will|must|shall)|{_YOU} (?:are|is) now (?:in )?"
         r"(?:dan\b|developer mode|jailbroken|unrestricted|free of|no longer bound)|"
         r"(?:enter|enable|activate) (?:developer|god|jailbreak|dan) mode)"),
        ("new-instructions", "injected instructions header",
         r"(?:^|\n)\s*(?:#+\s*)?(?:new|updated|real|actual|hidden|secret|important) "
         r"(?:system )?instructions?\s*:"),
        ("reveal", "order to reveal protected information",
         rf"\b(?:reveal|print|show|output|repeat|display|dump|leak|disclose|tell me|list)\s+"
         r"(?:me\s+)?(?:all\s+|every\s+)?(?:of\s+)?(?:the\s+(?:full\s+)?(?:contents?|text|"
         r"details|rest)\s+of\s+)?"
         rf"(?:your|the|its|any)\s+(?:\w+\s+)?{_SECRET_THING}"),
        ("exfiltrate", "order to send data elsewhere",
         rf"\b(?:send|post|upload|exfiltrate|forward|transmit|email|leak|copy|pipe)\s+"
         rf"(?:\w+\s+){{0,5}}?{_SECRET_THING}\s+(?:\w+\s+){{0,3}}?to\s+{_TARGET}"),
        ("exfil-image", "markdown image that carries data out",
         r"!\[[^\]]*\]\(\s*https?://[^)\s]*[?&][^)\s]*=(?:[^)\s]*\{|[^)\s]*\$|[^)\s]*%7B)"),
        ("run-command", "order to run commands",
         r"\b(?:run|execute|eval(?:uate)?)\s+(?:the\s+following|this|these)\s+(?:\w+\s+)?"
         r"(?:commands?|shell|code|script|payload)"),
        ("shell-payload", "download-and-run or destructive shell command",
         r"(?:\b(?:curl|wget)\s+[^\n|;]*\|\s*(?:ba|z)?sh\b|\brm\s+-rf\s+(?:/|~|\$HOME)(?:\s|$)|"
         r"\b(?:nc|ncat)\s+-e\s+/bin/(?:ba)?sh)"),
        ("chat-markup", "chat template markup",
         r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\|>|"
         r"\[/?INST\]|<<SYS>>|<</SYS>>"),
        ("tool-markup", "tool-call markup",
         r"</?(?:tool_call|tool_use|function_call|function_calls|invoke|antml:[a-z_]+|"
         r"tool_result|system-reminder|system)\b[^>]*>|\"tool_calls\"\s*:\s*\["),
        ("role-marker", "conversation role marker",
         r"(?:^|\n)\s*(?:system|assistant|human)\s*:\s*\S"),
        ("addressed-order", "order addressed to the agent",
         rf"\b(?:attention|note to|message (?:to|for)|instructions? (?:to|for)) {_YOU}\b|"
         rf"(?:^|[.!?:\n]\s*){_YOU},\s*(?:you )?must (?:now )?(?:always|never|obey|comply|"
         r"execute|run|send|"
         r"reveal|ignore|delete)"),
    )
)

# Words each rule needs (lower-cased) before its pattern is run: screening stays cheap.
_NEEDS: dict[str, tuple[str, ...]] = {
    "ignore-instructions": ("ignore", "disregard", "forget", "override", "bypass", "skip", "drop"),
    "ignore-everything": ("ignore", "disregard", "forget"),
    "new-identity": ("from now on", " now ", "mode"),
    "new-instructions": ("instruction",),
    "reveal": ("reveal", "print", "show", "output", "repeat", "display", "dump", "leak",
               "disclose", "tell me", "list"),
    "exfiltrate": (" to ",),
    "exfil-image": ("](",),
    "run-command": ("run", "execute", "eval"),
    "shell-payload": ("curl", "wget", "rm ", "nc ", "ncat"),
    "chat-markup": ("<|", "inst]", "<<sys>>", "<</sys>>"),
    "tool-markup": ("<", "tool_calls"),
    "role-marker": (":",),
    "addressed-order": ("attention", "note to", "message", "instruction", "must"),
}

# Rules that stay medium even unquoted: a role marker is common in pasted transcripts.
_MEDIUM_RULES = frozenset({"role-marker"})

# Overrides and isolates (the "Trojan Source" characters). Plain direction marks (LRM,
# RLM, ALM) are ordinary in right-to-left text and are not flagged.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\u180e\ufeff\u00ad")
_QUOTES = "\"'“”‘’«»`"


def _quoted(text: str, start: int, end: int) -> bool:
    """True when the span sits inside quotation marks on its line (a mention, not an order)."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    before = text[line_start:start]
    after = text[end:line_end]
    opens = sum(before.count(q) for q in _QUOTES)
    return opens % 2 == 1 and any(q in after for q in _QUOTES)


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


def scan_injection(text: str, *, field: str = "content") -> list[Finding]:
    """Suspected injection in ``text``, by position."""
    found = _unicode_findings(text, field)
    # Rules read the text as a reader would see it: invisible characters cannot split words.
    visible = "".join(" " if c in _INVISIBLE or c in _BIDI else c for c in text)
    lowered = visible.lower()
    for rule, label, pattern in INJECTION_RULES:
        needs = _NEEDS.get(rule)
        if needs and not any(word in lowered for word in needs):
            continue
        for match in pattern.finditer(visible):
            start, end = match.span()
            confidence: Confidence = "high"
            if rule in _MEDIUM_RULES or _quoted(visible, start, end):
                confidence = "medium"
            found.append(Finding("injection", rule, label, start, end, confidence, field))
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
