"""How much of a query the best keyword rows hold: a coverage that the store does not move.

Query-adaptive fusion scales the keyword weight by the keyword side's coverage of the
query. Measured as the best row's bm25 over an ideal row's (calibrate.py), it depends on
what else the namespace holds: every idf gains log N in a bigger store, and FTS5's length
normalisation divides by the average column lengths of all the rows, so a conversation's
turn reaches a smaller share of the ideal among 100k notes than alone (docs/benchmarks.md,
issue 28 round 9). Here the coverage is the share of the query words' idf mass that one
row's own text (its content and speaker) holds, the largest over the best keyword rows:
which words a row holds does not change with the store, and no length enters it.

Words are compared as FTS5 indexes them: both sides go through a private in-memory FTS5
table with the store's own tokenizer (``porter unicode61 remove_diacritics 2``), so
"joined" holds "join" exactly when the keyword search would match it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["held_share", "stems"]

_local = threading.local()


def _tokenizer() -> Any:
    conn = getattr(_local, "conn", None)
    if conn is None:
        # Imported here: the prompt hook's keyword-only path imports this module and
        # must not pay for the driver unless the coverage is asked for.
        from ..storage.driver import load_driver
        from ..storage.migrations import FTS_TOKENIZE

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


def held_share(idfs: Mapping[str, float], texts: Sequence[str]) -> float:
    """The largest share of the words' idf mass (``idfs``: query word -> idf) that one of
    ``texts`` holds every token of; 0.0 for no text, 1.0 for no idf mass."""
    total = sum(idfs.values())
    if total <= 0:
        return 1.0
    words = list(idfs)
    tokens = stems([*words, *texts])
    word_tokens, text_tokens = tokens[: len(words)], tokens[len(words):]
    best = 0.0
    for held in text_tokens:
        mass = sum(idfs[w] for w, need in zip(words, word_tokens, strict=True)
                   if need and need <= held)
        best = max(best, mass / total)
    return best
