"""The repositories a storage backend implements: typed Protocols the features rely on.

SQLite's implementations live in engine/storage/sqlite/ (FTS5 for keywords, sqlite-vec for
vectors); a second backend (PostgreSQL: full-text search and pgvector) supplies classes
with these methods, taking and returning the same types, so retrieval, lifecycle, facts
and trust run unchanged on it. Tables whose SQL is portable as written (the trust
tables: engine/storage/trust.py) need no second implementation; the backend's
:class:`~.protocol.Connection` adapter only translates the ``?`` placeholders.

Each method says what it returns, not how: a backend may use any SQL that gives the
same rows in the same order (the shared engine suite checks that).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..core.compose import FtsDoc
from ..core.models import MemoryRecord
from ..core.space import EmbeddingSpace
from .protocol import Connection, Cursor, Database
from .rows import NewRow, RowFilter, StoredTurn
from .vector_codec import Packed

__all__ = [
    "BlockReader", "EntityGraph", "KeywordIndex", "MemoryLinks", "MemoryRows", "MirrorReads",
    "Repositories", "ReviewLookups", "VectorIndex",
]


@runtime_checkable
class KeywordIndex(Protocol):
    """A keyword document per memory (keyed by its rowid), ranked search, term counts."""

    ranking: str  # how search ranks, as ``status`` says it

    def add(self, tx: Connection, rowid: int, doc: FtsDoc) -> None:
        ...

    def remove(self, tx: Connection, rowid: int) -> None:
        ...

    def search(
        self,
        conn: Connection,
        match: str,
        where: RowFilter,
        limit: int | None,
        weights: Sequence[float],
    ) -> list[tuple[int, float]]:
        """(rowid, score) best first; score = -bm25, higher is better. No row cap."""
        ...

    def document_counts(self, conn: Connection, terms: Sequence[str], cap: int) -> dict[str, int]:
        """Memories holding each term (store-wide, stemmed as the search does), counted
        up to ``cap`` from rowids alone; a term FTS5 cannot search counts 0."""
        ...

    def optimize(self, tx: Connection) -> None:
        """Merge the index's segments, so deleted documents' terms leave the file."""
        ...

    def write_marker(self, conn: Connection) -> Hashable | None:
        """What changes whenever the index does, whoever wrote (None: nothing cheap
        tells; recall then remembers no counts between snapshots)."""
        ...


# A namespace's int8 blocks: (rows in all, [(seq, rows)] of each block, a reader of one
# block's live rows by seq).
BlockReader = tuple[int, list[tuple[int, int]], Callable[[int], Packed]]


@runtime_checkable
class MirrorReads(Protocol):
    """What the vector mirror (engine/recall/mirror.py) reads of a store's vectors: both
    backends run storage/portable/vectors.py's; one with int8 blocks (SQLite) overrides
    the block methods."""

    def mirror_state(self, conn: Connection, space_key: str, namespace: str
                     ) -> tuple[int, int] | None: ...

    def namespace_rows(self, conn: Connection, namespace: str) -> int: ...

    def appended(self, conn: Connection, table: str, namespace: str, after: int) -> Cursor: ...

    def partition(self, conn: Connection, table: str, namespace: str, *, ordered: bool
                  ) -> Cursor: ...

    def raw_vectors(self, conn: Connection, table: str, rowids: Sequence[int]
                    ) -> dict[int, np.ndarray]: ...

    def stream(self, conn: Connection, table: str, namespace: str) -> Cursor: ...

    def turn_keys(self, conn: Connection, namespace: str) -> list[tuple[int, str, int]]: ...

    def session_rows(self, conn: Connection, namespace: str, session: str, low: int,
                     high: int) -> list[tuple[int, int]]: ...

    def block_reader(self, conn: Connection, space: EmbeddingSpace, namespace: str,
                     state: tuple[int, int]) -> BlockReader | None: ...

    def blocks_need_build(self, conn: Connection, space: EmbeddingSpace, namespace: str,
                          state: tuple[int, int]) -> bool: ...

    def rebuild_blocks(self, db: Database, space: EmbeddingSpace, namespace: str) -> bool: ...

    def compact_blocks(self, tx: Connection) -> int:
        """Drop forgotten rows' copies from the blocks; the blocks rewritten."""
        ...


@runtime_checkable
class VectorIndex(MirrorReads, Protocol):
    """Dense vectors per embedding space, partitioned by namespace, keyed by rowid."""

    vec_available: bool
    engine: str  # what holds the vectors, as ``status`` names it

    @staticmethod
    def table_name(space: EmbeddingSpace) -> str:
        ...

    def ensure_space(self, tx: Connection, space: EmbeddingSpace, stamp: str) -> str:
        ...

    def spaces(self, conn: Connection) -> list[tuple[str, str, int, str]]:
        ...

    def table_of(self, conn: Connection, space: EmbeddingSpace) -> str | None:
        """The table holding ``space``'s vectors, or None while the space has none."""
        ...

    def insert(
        self,
        tx: Connection,
        space: EmbeddingSpace,
        items: Sequence[tuple[int, str, Any]],
        stamp: str,
    ) -> None:
        """Add (rowid, namespace, vector) items; replaces any vector the rows had."""
        ...

    def delete(self, tx: Connection, rowid: int, namespace: str) -> None:
        """Remove a row's vectors from every space."""
        ...

    def missing(
        self,
        conn: Connection,
        space: EmbeddingSpace,
        namespace: str | None,
        limit: int,
        after: int = 0,
    ) -> list[int]:
        """Rowids above ``after`` with no vector in ``space`` (for re-embedding), oldest first."""
        ...

    def dedup_rows(
        self,
        conn: Connection,
        table: str,
        namespace: str,
        kinds: Sequence[str],
        *,
        above: int,
        below: int | None,
        active_only: bool,
    ) -> list[tuple[int, str, str, bytes]]:
        """(rowid, id, kind, float32 blob) of a namespace's non-turn memories of ``kinds``
        with a vector in ``table``, rowid in (above, below), oldest first."""
        ...

    def count_missing(self, conn: Connection, space: EmbeddingSpace, namespace: str | None) -> int:
        """Memories (of a namespace, or all) with no vector in ``space``."""
        ...

    def embedding_of(self, conn: Connection, space: EmbeddingSpace, memory_id: str) -> bytes | None:
        """A memory's float32 vector in ``space`` (None if it has none)."""
        ...


@runtime_checkable
class MemoryLinks(Protocol):
    """Links between memories (consolidation, merges)."""

    @staticmethod
    def add(
        tx: Connection,
        values: tuple[str, str, str, float | None, str, str],
    ) -> None:
        """(source id, target id, kind, score, namespace, created_at); a repeat is ignored."""
        ...

    @staticmethod
    def of(conn: Connection, memory_id: str) -> list[tuple[str, str, str, float | None]]:
        """(source, target, kind, score) of every link touching a memory, oldest first."""
        ...

    @staticmethod
    def sources_of(conn: Connection, target_id: str, kind: str, namespace: str) -> set[str]:
        """Ids linking to ``target_id`` with ``kind`` (e.g. the summaries of a memory)."""
        ...

    @staticmethod
    def between_active(
        conn: Connection, namespace: str, kind: str
    ) -> list[tuple[str, str, float | None]]:
        """(source, target, score) of a namespace's ``kind`` links between active memories."""
        ...


@runtime_checkable
class EntityGraph(Protocol):
    """Entities, their mentions by memories and the edges between them (the facts
    feature's graph; engine/facts/graph.py decides what to write)."""

    def add_entities(
        self, tx: Connection, rows: Sequence[tuple[str, str, str, str, str]]
    ) -> None:
        """(namespace, name, display, type, created_at) per entity; a known name is kept."""
        ...

    def add_mentions(self, tx: Connection, links: Sequence[tuple[int, int, str]]) -> None:
        """(memory rowid, entity id, source) per mention; a repeated mention is kept once."""
        ...

    def add_similar_edges(
        self, tx: Connection, edges: Sequence[tuple[str, int, int, str]], weight: float
    ) -> None:
        """(namespace, a, b, used_at) 'similar' edges of ``weight``; a known edge is kept."""
        ...

    def named_like(
        self, conn: Connection, namespace: str, names: Sequence[str], prefix: str
    ) -> list[tuple[int, str]]:
        """(id, name) of a namespace's entities named one of ``names`` or starting with
        ``prefix`` (longer than it), compared code point by code point."""
        ...

    def mentioning(
        self, conn: Connection, entity_ids: Sequence[int], where: RowFilter, limit: int
    ) -> list[tuple[str, str, list[int]]]:
        """(memory id, text, entity ids it mentions among ``entity_ids``) of memories passing
        ``where``, most mentions first, newest on ties."""
        ...

    def entities_of_memory(
        self, conn: Connection, memory_id: str, namespace: str
    ) -> list[tuple[int, str]]:
        """(entity id, name) of the entities a memory mentions."""
        ...


@runtime_checkable
class ReviewLookups(Protocol):
    """Review-queue lookups that read inside an item's JSON evidence."""

    @staticmethod
    def has_item_for_fact(conn: Connection, kind: str, memory_id: str, fact_id: int) -> bool:
        """Whether an item of ``kind`` about ``memory_id`` names ``fact_id`` as kept."""
        ...

    @staticmethod
    def has_open_proposal(conn: Connection, namespace: str, kind: str, key: str) -> bool:
        """Whether a pending or rejected item of ``kind`` carries evidence ``key``."""
        ...


@runtime_checkable
class MemoryRows(Protocol):
    """The memories table: rows, status and validity, listing, filters and counts. It
    reaches the keyword and vector indexes so that a row and its indexes change in one
    transaction."""

    @property
    def vectors(self) -> VectorIndex: ...

    @property
    def keywords(self) -> KeywordIndex: ...

    def insert(
        self, tx: Connection, row: NewRow, *, at: datetime | None = None, index: bool = True
    ) -> tuple[int, str]:
        """Insert a row (and, unless the caller re-indexes its session, its keyword doc)."""
        ...

    def insert_record(self, tx: Connection, record: MemoryRecord) -> bool:
        """Insert an exported record as it was (import). False if its id already exists."""
        ...

    def index_turns(
        self, tx: Connection, namespace: str, session_id: str, positions: Iterable[int]
    ) -> None:
        """(Re)build the keyword docs of a session's turns at ``positions`` and of the
        turns up to three before and after them, whose docs quote these as neighbours."""
        ...

    def index_all(
        self, tx: Connection, batch: int = 500,
        progress: Callable[[int, int], object] | None = None,
    ) -> int:
        """Write every memory's keyword document into an index holding none (doctor's
        rebuild, a copied store); ``progress(done, total)`` after each batch."""
        ...

    def reindex(self, tx: Connection, rowid: int) -> None:
        ...

    def find_exact(
        self,
        conn: Connection,
        namespace: str,
        content: str,
        kind: str,
        session_id: str | None,
        position: int | None,
    ) -> str | None:
        """An active or quarantined memory with the same text (and the same turn slot)."""
        ...

    def session_tail(
        self, conn: Connection, namespace: str, session_id: str, count: int
    ) -> list[StoredTurn]:
        """The last ``count`` (at least one) stored turns of a session, oldest first."""
        ...

    def get(self, conn: Connection, memory_id: str, namespace: str) -> MemoryRecord | None:
        ...

    def get_by_rowid(self, conn: Connection, rowid: int) -> MemoryRecord | None:
        ...

    def identity(self, conn: Connection, rowid: int) -> tuple[str, str, str] | None:
        """(id, namespace, content hash) of a row, without reading its text."""
        ...

    def rowid_hash_in_status(
        self, conn: Connection, memory_id: str, namespace: str, status: str
    ) -> tuple[int, str] | None:
        """(rowid, content hash) of a memory if it has ``status``."""
        ...

    def rowids(self, conn: Connection, where: RowFilter, limit: int) -> builtins.list[int]:
        """Rowids passing ``where``, oldest first, at most ``limit``."""
        ...

    def passing(self, conn: Connection, rowids: Iterable[int], where: RowFilter) -> set[int]:
        """Those of ``rowids`` that pass ``where`` (dense candidates, filtered)."""
        ...

    def summaries_citing(
        self, conn: Connection, namespace: str, memory_id: str, linked: Iterable[str]
    ) -> builtins.list[tuple[int, str, str]]:
        """(rowid, id, metadata JSON) of the namespace's summaries whose id is in ``linked``
        or whose metadata names ``memory_id`` (a cheap text test; the caller parses)."""
        ...

    def rowid_of(self, conn: Connection, memory_id: str, namespace: str) -> int | None:
        ...

    def records(self, conn: Connection, rowids: Iterable[int]) -> dict[int, MemoryRecord]:
        ...

    def speakers(self, conn: Connection, rowids: Iterable[int]) -> dict[int, str]:
        """Speaker of each given row that has one."""
        ...

    def common_terms(self, conn: Connection, terms: Sequence[str], threshold: int) -> set[str]:
        """Terms found in more than ``threshold`` memories (store-wide)."""
        ...

    def document_counts(self, conn: Connection, terms: Sequence[str], cap: int) -> dict[str, int]:
        """Memories holding each term, counted up to ``cap`` (see the keyword index)."""
        ...

    def size_hint(self, conn: Connection) -> int:
        """An upper bound on the number of memories, in O(1)."""
        ...

    def speaker_names(self, conn: Connection, namespace: str) -> list[str]:
        """Distinct speakers of a namespace's turns."""
        ...

    def write_marker(self, conn: Connection) -> Hashable | None:
        """The keyword index's write marker (see the keyword index)."""
        ...

    def update_fields(self, tx: Connection, rowid: int, fields: dict[str, Any]) -> None:
        """Set columns by name; the keyword index follows in the same transaction."""
        ...

    def delete(self, tx: Connection, rowid: int) -> None:
        """Remove a memory from the rows, the keyword index and every vector space."""
        ...

    def list(self, conn: Connection, where: RowFilter, limit: int) -> list[MemoryRecord]:
        ...

    def iter_namespace(self, conn: Connection, namespace: str | None) -> Iterable[MemoryRecord]:
        """Every memory of a namespace (or of the store), oldest first, streamed."""
        ...

    def page(
        self, conn: Connection, namespace: str | None, after: int, limit: int
    ) -> builtins.list[tuple[int, MemoryRecord]]:
        """Up to ``limit`` (rowid, memory) of a namespace (or the store) above ``after``."""
        ...

    def keyword_search(
        self,
        conn: Connection,
        match: str,
        where: RowFilter,
        limit: int | None,
        weights: Sequence[float],
    ) -> builtins.list[tuple[int, float]]:
        """(rowid, score) best first; score = -bm25, higher is better. No row cap."""
        ...

    def exact_duplicate_rows(
        self, conn: Connection, namespace: str
    ) -> builtins.list[tuple[str, str, str, str, builtins.list[str]]]:
        """(id, content hash, kind, text, tags) of active non-turn memories whose hash and
        kind another such memory shares, oldest first."""
        ...

    def active_tags_importance(
        self, conn: Connection, memory_id: str, namespace: str
    ) -> tuple[int, builtins.list[str], float] | None:
        """(rowid, tags, importance) of an active memory."""
        ...

    def active_id_at(
        self, conn: Connection, rowid: int, namespace: str, kind: str
    ) -> str | None:
        """The id of the row at ``rowid`` if it is an active ``kind`` of ``namespace``."""
        ...

    def usage(
        self, conn: Connection, rowids: Sequence[int]
    ) -> Iterator[tuple[int, float, float, int, str, str | None, int]]:
        """(rowid, importance, utility, access count, created_at, last_accessed_at,
        helpful votes) of the given rows, 500 at a time (lifecycle scoring)."""
        ...

    def summary_sources(
        self, conn: Connection, ids: Sequence[str]
    ) -> Iterator[tuple[str, str, builtins.list[str], str | None, str, float]]:
        """(id, text, tags, observed_at, created_at, importance) of the given ids."""
        ...

    def replacements(self, conn: Connection, rowids: Sequence[int]) -> builtins.list[
            tuple[int, int]]:
        """(rowid, rowid of the memory that superseded it) among ``rowids``."""
        ...

    def count_in(self, conn: Connection, namespaces: Sequence[str]) -> int:
        """Memories (any status) in the given namespaces."""
        ...

    def content_hashes(self, conn: Connection, rowids: Sequence[int]) -> dict[int, str]:
        """Content hash of each given row that still exists."""
        ...

    def metadata_values(
        self, conn: Connection, namespace: str, kind: str, source: str, key: str
    ) -> set[str]:
        """The distinct values of a top-level metadata key over a namespace's rows of one
        kind and source (the capture hook's turn uuids)."""
        ...

    def mark_superseded_by(self, tx: Connection, memory_id: str, namespace: str, by: str) -> None:
        """Record ``by`` as the replacement of a memory that has none yet (status kept)."""
        ...

    def kind_status_replacement(
        self, conn: Connection, memory_id: str, namespace: str
    ) -> tuple[str, str, str | None] | None:
        """(kind, status, superseded_by) of a memory."""
        ...

    def set_superseded(
        self, tx: Connection, memory_id: str, namespace: str, *, status: str,
        valid_to: str | None, by: str, at: str,
    ) -> None:
        ...

    def retire_replaced(
        self, tx: Connection, memory_id: str, namespace: str, *, valid_to: str, by: str, at: str
    ) -> None:
        """Superseded by ``by`` from ``valid_to`` (a quarantined memory keeps its status)."""
        ...

    def namespace_counts(self, conn: Connection) -> dict[str, int]:
        ...

    def record_access(self, tx: Connection, items: Iterable[tuple[int, str, str]]) -> None:
        """(recalls to add, last access stamp, memory id) per memory; last access only
        moves forward."""
        ...

    def existing_ids(self, conn: Connection, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` already stored, in any namespace (import skips them)."""
        ...

    def content_hash_of(self, conn: Connection, memory_id: str, namespace: str) -> str | None:
        ...

    def set_utility(self, tx: Connection, memory_id: str, value: float) -> None:
        """The feedback estimate recall's scoring reads; the text and its indexes stay."""
        ...

    def count_status(self, conn: Connection, namespace: str, status: str) -> int:
        ...

    def maintained_namespaces(self, conn: Connection) -> builtins.list[str]:
        """Namespaces that hold memories or have a maintenance run on record, sorted."""
        ...

    def contents(self, conn: Connection, namespace: str) -> dict[str, str]:
        """Id -> text of every memory of a namespace (any status)."""
        ...

    def undo_supersession(self, tx: Connection, memory_id: str, namespace: str, by: str) -> None:
        """Reopen a memory that ``by`` superseded (facts: a rejected conflict)."""
        ...

    def active_content_importance(
        self, conn: Connection, memory_id: str, namespace: str
    ) -> tuple[str, float] | None:
        """(text, importance) of an active memory (a consolidation's source)."""
        ...

    def namespaces_unmaintained_since(self, conn: Connection, cutoff: str) -> builtins.list[str]:
        """Namespaces holding memories with no maintenance run started after ``cutoff``."""
        ...

    def metadata_expiries(
        self, conn: Connection, namespace: str
    ) -> builtins.list[tuple[str, object]]:
        """(id, metadata.expires_at as stored) of a namespace's active memories that set it."""
        ...

    def demotion_candidates(
        self, conn: Connection, namespace: str
    ) -> builtins.list[tuple[str, float, str, str | None, int, int, int, int]]:
        """(id, importance, created_at, last_accessed_at, access count, helpful, unhelpful,
        wrong) of a namespace's active memories that may go cold (no turns, no summaries),
        oldest first."""
        ...


@dataclass(frozen=True)
class Repositories:
    """One backend's repositories, as the engine is built from them."""

    dialect: str
    rows: MemoryRows
    keywords: KeywordIndex
    vectors: VectorIndex
    links: MemoryLinks
    review: ReviewLookups
    entities: EntityGraph
