"""The memory's fields and their limits, declared once.

``engine/core/validate.py`` checks values against these numbers, ``engine/core/models.py`` types
its records with these literals, and the edges derive theirs from them (``mcp/models.py``
builds the pydantic field types whose JSON schemas an agent reads; the CLI its help and
choices), so the limits cannot disagree. ``tests/mcp/test_domain_limits.py`` checks
the published schemas against this module.

Standard library only: the prompt hook and the stdio front import this module (through
``validate`` and ``projects``) on paths where importing pydantic would cost more than
their whole answer.

Two decisions recorded here (and in docs/architecture.md):

- **Content is limited in UTF-8 bytes** (``CONTENT_MAX_BYTES``, the default of the
  ``max_content_bytes`` setting): storage, the FTS index and the encoder's input grow
  with bytes, and the same text must pass or fail the same way in every language. A
  JSON schema can only count characters, so the MCP schemas publish
  ``maxLength = CONTENT_MAX_BYTES``: a text within the byte limit always passes it (a
  character is at least one byte), and the engine's byte check decides the rest.
- **One result limit, ``RESULTS_MAX`` = 1000**, for recall and search at every edge
  (MCP said 100, the engine 1000). The bound protects the process, not the agent's
  context: an agent's context is protected by the small defaults (10 hits) and by
  ``max_tokens``, while evaluation and export-style callers ask for hundreds.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "CONTENT_MAX_BYTES",
    "FIELD_MAX",
    "ID_MAX",
    "ID_PATTERN",
    "IMPORTANCE_DEFAULT",
    "IMPORTANCE_MAX",
    "IMPORTANCE_MIN",
    "KINDS",
    "METADATA_MAX_BYTES",
    "METADATA_MAX_DEPTH",
    "NAMESPACE_MAX",
    "NAMESPACE_PATTERN",
    "PINNED_TAGS",
    "QUERY_MAX",
    "RESULTS_MAX",
    "STATUSES",
    "STORE_KINDS",
    "TAGS_MAX",
    "TAG_MAX",
    "TAG_PATTERN",
    "TURNS_MAX",
    "YEAR_MAX",
    "YEAR_MIN",
    "MemoryKind",
    "MemoryStatus",
    "StoreKind",
]

MemoryKind = Literal["note", "learning", "turn", "fact", "summary"]
# What a caller stores directly; 'turn' rows come from storing a conversation.
StoreKind = Literal["note", "learning", "fact", "summary"]
MemoryStatus = Literal["active", "quarantined", "superseded", "archived"]
KINDS: tuple[str, ...] = get_args(MemoryKind)
STORE_KINDS: tuple[str, ...] = get_args(StoreKind)
STATUSES: tuple[str, ...] = get_args(MemoryStatus)

# A namespace is a short safe name (no file path is ever built from it); '..' is refused
# by the engine too (a JSON-schema pattern here cannot say it without lookahead).
NAMESPACE_MAX = 128
NAMESPACE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]*$"
TAG_MAX = 64
TAG_PATTERN = r"^[^\x00-\x1f,]+$"  # no commas: the CLI and filters split tags on them
TAGS_MAX = 32
CONTENT_MAX_BYTES = 100_000
METADATA_MAX_BYTES = 64_000
# JSON nested deeper than this is refused before anything recursive (json.dumps) sees it.
METADATA_MAX_DEPTH = 32
ID_MAX = 128
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]*$"
FIELD_MAX = 1000  # source, speaker, role, session id: short labels, not documents
IMPORTANCE_MIN, IMPORTANCE_MAX, IMPORTANCE_DEFAULT = 0.0, 1.0, 0.5
RESULTS_MAX = 1000
QUERY_MAX = 2000  # a question or keywords; longer text is a document, not a query
TURNS_MAX = 500  # turns in one store_conversation call
# Times outside these years are refused: the fixed-width stored form needs four-digit
# years, and time arithmetic (ages, windows) must not leave datetime's range.
YEAR_MIN, YEAR_MAX = 1000, 8999

# Tags that mark a memory as a decision or pinned: the session briefing puts these first
# and the wiki export gives each its own page.
PINNED_TAGS = ("pinned", "pin", "decision", "decisions", "important")
