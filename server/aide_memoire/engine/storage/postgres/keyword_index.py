"""The keyword repository on PostgreSQL (the :class:`~..repositories.KeywordIndex` Protocol).

Recall and forget build their keyword query as an FTS5 MATCH expression (text.fts_query:
quoted terms OR-ed and at most one "(a AND b ...)" group; forget.match_all: terms
AND-ed). :func:`match_terms` reads that expression back into its alternatives, which
keyword.py searches as FTS5's phrases: no query syntax of either engine reaches the
server. The column weights recall passes are applied per search, as bm25()'s arguments.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence

from ...core.compose import FtsDoc
from ...core.errors import InvalidInput
from ..filter import RowFilter
from ..protocol import Connection
from .filters import where_pg
from .keyword import index_document, phrase_count, ranked_search, unindex, word_counts
from .keyword_tokens import phrase_tokens
from .snapshot import memo

__all__ = ["PostgresKeywordIndex", "match_terms"]

_TOKEN = re.compile(r'\s*(?:"((?:[^"]|"")*)"|(\()|(\))|(AND)\b|(OR)\b)')


def match_terms(match: str) -> list[list[str]]:
    """The alternatives (OR-ed; each a list of terms that must all match) of an FTS5
    expression recall or forget wrote: quoted terms joined by OR and AND, with AND
    groups in parentheses (text.fts_query, trust/forget.match_all)."""
    alternatives: list[list[str]] = [[]]
    depth, i, end = 0, 0, len(match.rstrip())
    while i < end:
        token = _TOKEN.match(match, i)
        if token is None:
            raise InvalidInput(f"keyword query {match!r} is not one the engine writes")
        quoted, opening, closing, _and, either = token.groups()
        if quoted is not None:
            alternatives[-1].append(quoted.replace('""', '"'))
        elif opening:
            depth += 1
        elif closing:
            depth -= 1
        elif either:
            if depth:  # an OR inside a group: no query the engine writes has one
                raise InvalidInput(f"keyword query {match!r} is not one the engine writes")
            alternatives.append([])
        i = token.end()
    return [group for group in alternatives if group]


class PostgresKeywordIndex:
    """FTS5's postings in b-tree tables (``keyword_postings``), scored as FTS5's bm25."""

    ranking = "FTS5 BM25 (FTS5's tokens, computed by PostgreSQL) over every row of the namespace"

    def add(self, tx: Connection, rowid: int, doc: FtsDoc) -> None:
        found = tx.execute("SELECT namespace FROM memories WHERE rowid = ?", (rowid,)).fetchone()
        if found is None:
            raise InvalidInput(f"no memory at rowid {rowid} to index")
        index_document(tx, rowid, str(found[0]), doc)

    def remove(self, tx: Connection, rowid: int) -> None:
        unindex(tx, rowid)

    def search(
        self,
        conn: Connection,
        match: str,
        where: RowFilter,
        limit: int | None,
        weights: Sequence[float],
    ) -> list[tuple[int, float]]:
        """(rowid, score) best first; score = -bm25, higher is better. No row cap."""
        clause, params = where_pg(where, "m")
        return ranked_search(
            conn, match_terms(match), where.namespaces, clause, params, limit=limit,
            weights=weights,
        )

    def document_counts(self, conn: Connection, terms: Sequence[str], cap: int) -> dict[str, int]:
        """Memories holding each term (store-wide, stemmed as the search does), counted
        up to ``cap``; a term FTS5 reduces to no token counts 0."""
        # The one-word terms (nearly all) in one read of keyword_terms: one per term was
        # a round trip each, 3.3 a recall at 100k, ~10 ms apiece at load 20.
        tokens = {term: phrase_tokens(term) for term in terms}
        words = word_counts(conn, [t[0] for t in tokens.values() if len(t) == 1])
        return {term: min(words[t[0]], int(cap)) if len(t) == 1
                else phrase_count(conn, term, cap) for term, t in tokens.items()}

    def write_marker(self, conn: Connection) -> Hashable | None:
        """The read-only snapshot's own ``pg_current_snapshot()`` (read with its facts,
        snapshot.py): equal for two snapshots only if no transaction committed between
        them, on any table (a write elsewhere only costs a recount). None outside a
        read-only snapshot."""
        facts = memo(conn)
        return None if facts is None else facts.get("snapshot")

    def optimize(self, tx: Connection) -> None:
        """Nothing to merge: b-trees drop a deleted document's entries themselves; the
        dead tuples go with VACUUM, which purge.py runs outside the transaction."""
