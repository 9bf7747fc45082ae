"""The engine's parts, opened once in one explicit order and shared by every service.

:func:`open_context` is the only place the parts are made; each service takes the
frozen :class:`EngineContext` and owns nothing but its own state. The order is
:data:`START_ORDER` (docs/architecture.md shows it too): a part is made only after
every part it needs. :meth:`EngineContext.close` stops what the opening started.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...logs import get_logger
from ..core.errors import AideMemoireError, StoreError
from ..core.settings import Settings
from ..recall.embed import Embedder
from ..recall.mirror import VectorMirror
from ..recall.recaller import Recaller
from ..recall.rerank import Reranker, RerankTuning
from ..storage.access import AccessLog
from ..storage.db import SqliteDatabase
from ..storage.driver import driver_for
from ..storage.protocol import Database
from ..storage.repositories import MemoryRows, Repositories, VectorIndex
from ..storage.sqlite import sqlite_repositories
from ..storage.sqlite.memory_rows import SqliteMemoryRows
from ..storage.sqlite.vectors import SqliteVectorIndex
from ..trust import audit, forget, seal
from ..trust.anchor import Anchor
from ..trust.guard import Trust
from .pipeline import WritePipeline

if TYPE_CHECKING:
    from ..core.space import EmbeddingSpace
    from ..storage.protocol import Connection
    from ..trust.models import ReviewItem

__all__ = [
    "START_ORDER",
    "EngineContext",
    "ProposalHandler",
    "ProposalPreparer",
    "ProposalRegistry",
    "open_context",
    "sqlite_only",
]

log = get_logger(__name__)

# The order open_context makes the parts in; each needs only those before it.
START_ORDER = (
    "database",       # the file, its schema and the driver
    "vector tables",  # which vec0 tables exist (needs the database's sqlite-vec)
    "store",          # rows and keyword index, over the vector tables (+ ctx.repos)
    "embedder",       # the dense model (loaded lazily, never here)
    "reranker",       # the optional cross-encoder
    "mirror",         # the one bounded copy of the vectors
    "recaller",       # recall over store, embedder, tables, mirror, reranker
    "trust",          # screens and the audit log, over database and store
    "audit anchor",   # the chain head kept outside the file; commit hooks
    "write pipeline", # screen -> insert -> index -> audit -> after-write hooks
    "proposals",      # review-item kind -> approve / reject, filled by the services
    "access log",     # recall statistics, flushed in batches
)

# Applies an approved (or rejected) proposal of one kind inside the deciding
# transaction. Services register their kinds in EngineContext.proposals.
ProposalHandler = Callable[["Connection", "ReviewItem", "EngineContext"], None]
# A kind's model work done before that transaction (it must not hold the writer's lock
# through a forward pass); returns the approve step to run inside it.
ProposalPreparer = Callable[["ReviewItem", "EngineContext"], ProposalHandler]


class ProposalRegistry:
    """Review-item kinds other than quarantine, each with its approve and reject step."""

    def __init__(self) -> None:
        self._kinds: dict[str, tuple[ProposalHandler, ProposalHandler]] = {}
        self._preparers: dict[str, ProposalPreparer] = {}

    def register(self, kind: str, *, approve: ProposalHandler, reject: ProposalHandler,
                 prepare: ProposalPreparer | None = None) -> None:
        if not kind or kind == "quarantine":
            raise ValueError(f"{kind!r} cannot be registered as a proposal kind")
        if kind in self._kinds:  # two services claiming one kind is a wiring bug
            raise ValueError(f"proposal kind {kind!r} is registered already")
        self._kinds[kind] = (approve, reject)
        if prepare is not None:
            self._preparers[kind] = prepare

    def preparer(self, kind: str) -> ProposalPreparer | None:
        return self._preparers.get(kind)

    def handlers(self, kind: str) -> tuple[ProposalHandler, ProposalHandler] | None:
        return self._kinds.get(kind)

    def kinds(self) -> tuple[str, ...]:
        return tuple(self._kinds)


@dataclass(frozen=True)
class EngineContext:
    """What every service is built from. Frozen: a service cannot swap a part."""

    settings: Settings
    db: Database
    tables: VectorIndex
    store: MemoryRows
    repos: Repositories  # the backend's repositories; ``store`` is its rows, ``tables`` its vectors
    embedder: Embedder
    reranker: Reranker
    mirror: VectorMirror
    recaller: Recaller
    trust: Trust
    anchor: Anchor
    pipeline: WritePipeline
    proposals: ProposalRegistry
    access: AccessLog

    @property
    def actor(self) -> str:
        """Who the audit log names for calls made now (the trust screen knows)."""
        return self.trust.actor

    def dense_live(self) -> bool:
        return self.recaller.dense_live()

    def live_space(self) -> EmbeddingSpace | None:
        """The embedding space when dense vectors are being written, else None."""
        return self.embedder.space if self.dense_live() else None

    def vector_table(self, conn: Connection, *, wait: bool = True) -> str | None:
        """The vec0 table of the configured model, or None when keyword-only.

        ``wait`` loads the model first if need be; without it, a model not loaded yet
        counts as none (a write hook must not load a model under the write lock).
        """
        if not self.dense_live() or (wait and not self.embedder.wait()):
            return None
        space = self.embedder.space
        return self.tables.table_of(conn, space) if space is not None else None

    def require_sqlite(self, feature: str) -> SqliteDatabase:
        """The SQLite store, for a feature only it has yet (snapshots and doctor copy and
        check a file; the code index's SQL is SQLite's); refused, naming the setting, on
        another backend."""
        if not isinstance(self.db, SqliteDatabase):
            raise sqlite_only(feature)
        return self.db

    def flush_access(self) -> None:
        try:
            self.access.flush(self.db)
        except AideMemoireError as exc:  # statistics must never fail a recall
            log.warning("access_stats_not_written", error=str(exc))

    def close(self) -> None:
        """Flush what is owed to the file and close it; a second call does nothing."""
        if not self.db.closed:
            self.flush_access()
            forget.retry_pending(self.db, self.store.keywords)  # a purge still owed, if any
        self.db.close()


def sqlite_only(feature: str) -> StoreError:
    """The error for a feature the PostgreSQL store does not have yet, naming the setting."""
    return StoreError(
        f"{feature} works on the SQLite store only, for now; this home uses the PostgreSQL "
        "store AIDE_MEMOIRE_DATABASE_URL names (unset it for the SQLite store in the home; "
        "docs/postgres.md says what works there)"
    )


def _anchor(db: Database, store: MemoryRows) -> Anchor:
    """Keep the audit chain's head outside the file too (see anchor.py), and finish a
    purge still owed (a long reader held it up, or a crash cut it short: see forget.py)
    at open and after each commit."""
    anchor = Anchor(db.local_state)
    if db.created:
        anchor.reset(db.conn())
    else:
        anchor.adopt(db.conn())
    db.commit_hooks.append(anchor.advance)
    db.commit_hooks.append(lambda _conn: forget.retry_pending(db, store.keywords))
    forget.retry_pending(db, store.keywords)
    return anchor


def _seal_fields(db: SqliteDatabase, trust: Trust) -> None:
    """Chain the audited fields of every memory a write transaction touches (seal.py)."""
    db.begin_hooks.append(seal.ensure_triggers)
    db.precommit_hooks.append(lambda tx: audit.seal_touched(tx, actor=trust.actor))


def _open_store(settings: Settings) -> tuple[Database, VectorIndex, MemoryRows, Repositories]:
    """The store the settings name (a PostgreSQL URL, or the home's SQLite file), its
    vector tables, its memories repository and the backend's repositories."""
    if settings.database_url is not None:
        from ..storage.postgres import postgres_repositories  # the extra: only when asked
        from ..storage.postgres.parts import open_postgres

        pg, rows = open_postgres(settings)
        return pg, rows.vectors, rows, postgres_repositories(rows=rows)
    db = SqliteDatabase(
        settings.db_path,
        driver=driver_for(settings.db_path, settings),
        busy_timeout_ms=settings.busy_timeout_ms,
        max_page_count=settings.max_db_pages,
    )
    tables = SqliteVectorIndex(vec_available=db.vector_support().available)
    store = SqliteMemoryRows(tables)
    return db, tables, store, sqlite_repositories(tables, rows=store)


def open_context(settings: Settings) -> EngineContext:
    """Open the store and make every part, in :data:`START_ORDER`."""
    db, tables, store, repos = _open_store(settings)
    try:
        embedder = Embedder(
            settings.embedding_model,
            batch_size=settings.embedding_batch_size,
            backend=settings.embedding_backend,
            int8=settings.embedding_int8,
            cache_dir=settings.model_cache_dir,
        )
        reranker = Reranker(
            settings.reranker_model,
            tuning=RerankTuning(depth=settings.rerank_depth, base_floor=settings.rerank_floor),
        )
        mirror = VectorMirror(tables, settings.vector_mirror_mb * 2**20, db=db)
        recaller = Recaller(
            store, embedder=embedder, tables=tables, cache=mirror,
            reranker=reranker if reranker.configured else None,
        )
        trust = Trust(db, store, mode=settings.screen_mode)
        anchor = _anchor(db, store)
        if isinstance(db, SqliteDatabase):
            _seal_fields(db, trust)
        pipeline = WritePipeline(
            db=db, store=store, tables=tables, trust=trust, embedder=embedder,
            dense_live=recaller.dense_live, session_changed=recaller.names.forget,
        )
        return EngineContext(
            settings=settings, db=db, tables=tables, store=store, repos=repos, embedder=embedder,
            reranker=reranker, mirror=mirror, recaller=recaller, trust=trust, anchor=anchor,
            pipeline=pipeline, proposals=ProposalRegistry(),
            access=AccessLog(repos.rows),
        )
    except BaseException:
        db.close()  # a part that failed to start must not leave the file open
        raise
