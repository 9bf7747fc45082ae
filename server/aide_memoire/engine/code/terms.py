"""Identifier splitting for the code search index and its queries.

``getUserName``, ``get_user_name`` and ``HTTPServer`` become ``get user name`` and
``http server``. The FTS tokenizer keeps ``_`` inside tokens, so the original identifier
stays searchable as one term next to its parts.
"""

from __future__ import annotations

import functools
import re

from ..core.text import STOP_WORDS

__all__ = ["fts_query", "index_text", "split_identifier"]

_WORD = re.compile(r"\w+", re.UNICODE)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_A-Za-z]+", re.UNICODE)


@functools.lru_cache(maxsize=65536)
def split_identifier(word: str) -> tuple[str, ...]:
    """The lower-cased parts of an identifier; one part when it does not split."""
    parts: list[str] = []
    for piece in word.split("_"):
        parts.extend(match.lower() for match in _CAMEL.findall(piece))
    return tuple(parts) if parts else (word.lower(),)


def index_text(text: str) -> str:
    """``text`` followed by the parts of each compound identifier in it, for FTS."""
    extra: list[str] = []
    seen: set[str] = set()
    for word in _WORD.findall(text):
        if word in seen:
            continue
        seen.add(word)
        parts = split_identifier(word)
        if len(parts) > 1:
            extra.extend(parts)
    return f"{text}\n{' '.join(extra)}" if extra else text


def query_terms(query: str) -> list[str]:
    """Distinct lower-cased search terms: each word as typed and its identifier parts."""
    terms: list[str] = []
    for word in _WORD.findall(query):
        for term in (word.lower(), *split_identifier(word)):
            if term not in terms:
                terms.append(term)
    content = [t for t in terms if t not in STOP_WORDS]
    return content or terms


def fts_query(query: str) -> str | None:
    """An FTS5 MATCH expression (OR of quoted terms); None when the query has no words."""
    terms = query_terms(query)
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
