"""The prompt hook's read-only keyword lookup, on the one backend that is a file (SQLite).

A storage-level name for it, so that the hook edge asks storage, not a backend package
(tests/test_contracts.py: only storage imports one); a package of its own, so that the
storage package itself does not import a backend (no cycle). A PostgreSQL store has no such
lookup: the hook asks the engine (or the warm daemon) there.
"""

from __future__ import annotations

from ..sqlite.lookup import KeywordLookup, LookupRow, open_lookup

__all__ = ["KeywordLookup", "LookupRow", "open_lookup"]
