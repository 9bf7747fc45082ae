"""The dense query as a statement: a question's interrogative framing left out.

A memory is a statement ("The nightly ETL died because the pool ran dry"); a question
about it opens with words no statement holds ("why did", "what is", "would ..."). A
sentence encoder reads that framing as part of the meaning, so a question sits nearer to
other questions (and to small talk asking things) than to the statement that answers it.
Leaving the opening wh-word and its auxiliary out ("why did the overnight data load
crash" -> "the overnight data load crash") moves the query towards the answer's form.
Only the framing goes: what the question is about stays word for word.
"""

from __future__ import annotations

import re

__all__ = ["as_statement"]

_AUX = (r"(?:do|does|did|is|are|was|were|am|has|have|had|can|could|would|will|should|"
        r"shall|may|might|must)(?:n['’]t)?")
# An opening wh-phrase ("how long", "what kind of"), then an optional auxiliary; or a
# bare auxiliary opening a yes/no question ("Would Sam enjoy ...", "Is Sam ...").
_OPENING = re.compile(
    r"^\W*(?:(?:what|which|who|whom|whose|when|where|why|how(?:\s+(?:long|many|much|often|"
    r"old|far|come))?)(?:\s+(?:kind|sort|type)s?\s+of)?(?:\s+" + _AUX + r")?"
    r"|" + _AUX + r")\b\s*",
    re.IGNORECASE,
)
_TRAILING = re.compile(r"[\s?]+$")


def as_statement(query: str) -> str:
    """``query`` without its opening interrogative words and its question mark; the query
    itself when it is no question or nothing would be left."""
    stripped = _OPENING.sub("", query, count=1)
    stripped = _TRAILING.sub("", stripped).strip()
    if not re.search(r"\w", stripped):
        return query
    return stripped
