"""Words as the keyword index stores them: FTS5's own tokenizer (``porter unicode61
remove_diacritics 2``) run over texts through a private in-memory FTS5 table, one per
thread, so a caller compares words exactly as the keyword search would match them
(recall/held.py's coverage)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["stems"]

_local = threading.local()


def _tokenizer() -> Any:
    conn = getattr(_local, "conn", None)
    if conn is None:
        # Imported here: the prompt hook's keyword-only path imports this module and
        # must not pay for the driver unless the coverage is asked for.
        from .driver import load_driver
        from .migrations import FTS_TOKENIZE

        conn = load_driver().connect(":memory:", check_same_thread=True)
        conn.execute(f"CREATE VIRTUAL TABLE held USING fts5(text, content='', "
                     f"tokenize='{FTS_TOKENIZE}')")
        conn.execute("CREATE VIRTUAL TABLE held_terms USING fts5vocab(held, 'instance')")
        _local.conn = conn
    return conn


def stems(texts: Sequence[str]) -> list[set[str]]:
    """The FTS5 tokens of each text, in one insert and one read."""
    if not texts:
        return []
    conn = _tokenizer()
    out: list[set[str]] = [set() for _ in texts]
    try:
        conn.executemany("INSERT INTO held (rowid, text) VALUES (?, ?)",
                         [(n + 1, text) for n, text in enumerate(texts)])
        for term, number in conn.execute("SELECT term, doc FROM held_terms"):
            out[int(number) - 1].add(str(term))
    finally:
        conn.execute("INSERT INTO held (held) VALUES ('delete-all')")
    return out
