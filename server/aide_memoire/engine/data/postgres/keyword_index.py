"""The keyword repository on PostgreSQL (the :class:`~..repositories.KeywordIndex` Protocol).

Recall and forget build their keyword query as an FTS5 MATCH expression (text.fts_query:
quoted terms OR-ed and at most one "(a AND b ...)" group; forget.match_all: terms
AND-ed). :func:`match_terms` reads that expression back into its alternatives, which
keyword.py searches as plain words: no query syntax of either engine reaches the server.
The column weights recall passes are the ones the documents were weighted with when
written (keyword.py's classes), so the argument is compared, not applied per search.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ....logs import get_logger
from ...compose import FtsDoc
from ...errors import InvalidInput
from ...fusion import KEYWORD_WEIGHTS
from ...migrations import FTS_COLUMNS
from ..filter import RowFilter
from ..protocol import Connection
from .filters import where_pg
from .keyword import TS_CONFIG, fold, index_document, ranked_search, unindex

__all__ = ["PostgresKeywordIndex", "match_terms"]

log = get_logger(__name__)

_TOKEN = re.compile(r'\s*(?:"((?:[^"]|"")*)"|(\()|(\))|(AND)\b|(OR)\b)')
_WEIGHTS = [KEYWORD_WEIGHTS[c] for c in FTS_COLUMNS]


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
    """One weighted ``tsvector`` per memory (``memory_fts``), ranked BM25's way."""

    ranking = "PostgreSQL full-text search, BM25-shaped, over every row of the namespace"

    def __init__(self) -> None:
        self._told = False

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
        """(rowid, score) best first; higher is better. No row cap."""
        if [float(w) for w in weights] != _WEIGHTS and not self._told:
            # The classes are fixed when a document is written (keyword.py); other
            # weights would need a re-index, not a different search: said once.
            self._told = True
            log.warning("keyword_weights_fixed_at_write", asked=list(weights), used=_WEIGHTS)
        clause, params = where_pg(where, "m")
        return ranked_search(
            conn, match_terms(match), where.namespaces, clause, params, limit=limit
        )

    def document_counts(self, conn: Connection, terms: Sequence[str], cap: int) -> dict[str, int]:
        """Memories holding each term (store-wide, stemmed as the search does), counted
        up to ``cap``; a term the configuration reduces to nothing counts 0."""
        out: dict[str, int] = {}
        for term in terms:
            (count,) = conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM memory_fts "
                f"WHERE document @@ plainto_tsquery('{TS_CONFIG}', ?) LIMIT ?) AS hits",
                (fold(term), cap),
            ).fetchone()
            out[term] = int(count)
        return out

    def optimize(self, tx: Connection) -> None:
        """Nothing to merge: a GIN index drops a deleted document's entries itself; the
        dead tuples go with VACUUM, which purge.py runs outside the transaction."""
