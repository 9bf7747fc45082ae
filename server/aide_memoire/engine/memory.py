"""``Memory``: the engine's one front door for Python programs, the CLI and the MCP server."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from .._version import __version__
from ..logs import get_logger
from . import clock, parts
from . import validate as v
from .access import AccessLog
from .code.models import CodeHit, CodeIndexReport, SymbolHit
from .conversation import Turn, plan_turns
from .db import Database
from .driver import load_driver
from .embed import Embedder
from .errors import AideMemoireError, InvalidInput, NotFound
from .facts.api import FactsAPI
from .lifecycle.api import LifecycleAPI
from .models import Hit, ImportReport, MemoryRecord, Stage, Status
from .ops import doctor as ops_doctor
from .ops import reembed as ops_reembed
from .ops import snapshot as ops_snapshot
from .ops import transfer
from .ops.models import DoctorReport, ReembedReport, RestoreReport, SnapshotInfo
from .pipeline import SecretsPolicy, WritePipeline, WriteResult, check_policy
from .recall import Recaller, RecallRequest
from .rerank import Reranker, RerankTuning
from .settings import Settings
from .store import NewRow, RowFilter, Store, WriteHook
from .trust.api import TrustAPI
from .trust.forget import purge, retry_pending
from .trust.guard import Trust
from .vectors import VectorMirror, VectorTables

__all__ = ["Memory"]

log = get_logger(__name__)

EXPORT_FORMAT = "aide-memoire/jsonl"
EXPORT_VERSION = 1
EXPORT_PAGE = 500
LIMIT_MAX = 1000


def _namespaces(namespace: str | Sequence[str]) -> list[str]:
    names = [namespace] if isinstance(namespace, str) else list(namespace)
    if not names:
        raise InvalidInput("give at least one namespace")
    return [v.validate_namespace(name) for name in names]


def _limit(limit: object, *, maximum: int = LIMIT_MAX) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidInput(f"limit must be a whole number from 1 to {maximum}, got {limit!r}")
    return limit


class Memory(TrustAPI, LifecycleAPI, FactsAPI):
    """Persistent memory in one local SQLite file. Thread-safe; use as a context manager.

    >>> with Memory(home=tmp) as memory:                          # doctest: +SKIP
    ...     memory.store("The deploy script lives in ops/deploy.sh", namespace="project:x")
    """

    def __init__(
        self, home: str | os.PathLike[str] | None = None, *, settings: Settings | None = None
    ) -> None:
        if settings is None:
            settings = Settings.from_env(home=Path(home) if home is not None else None)
        elif home is not None:
            settings = settings.model_copy(update={"home": Path(home)})
        self.settings = settings
        self.db = Database(
            settings.db_path,
            driver=load_driver(settings.sqlite_driver),
            busy_timeout_ms=settings.busy_timeout_ms,
            max_page_count=settings.max_db_pages,
        )
        self.vector_tables = VectorTables(vec_available=self.db.vec_version is not None)
        self.store_ = Store(self.vector_tables)
        self.embedder = Embedder(
            settings.embedding_model,
            batch_size=settings.embedding_batch_size,
            backend=settings.embedding_backend,
            int8=settings.embedding_int8,
            cache_dir=settings.model_cache_dir,
        )
        self.access = AccessLog()
        self.reranker = Reranker(
            settings.reranker_model,
            tuning=RerankTuning(depth=settings.rerank_depth, base_floor=settings.rerank_floor),
        )
        # One bounded copy of the vectors, shared by recall and near-duplicate checks.
        self.mirror = VectorMirror(settings.vector_mirror_mb * 2**20)
        self.recaller = Recaller(
            self.store_,
            embedder=self.embedder,
            tables=self.vector_tables,
            cache=self.mirror,
            reranker=self.reranker if self.reranker.configured else None,
        )
        self.trust = Trust(self.db, self.store_, mode=settings.screen_mode)
        self._init_audit_anchor()  # the audit head kept outside the file, after each commit
        self.pipeline = WritePipeline(
            db=self.db, store=self.store_, tables=self.vector_tables, trust=self.trust,
            embedder=self.embedder, dense_live=self.recaller.dense_live,
            session_changed=self.recaller.names.forget,
        )
        # Run in the writing transaction after new rows and their vectors are in.
        self.after_write: list[tuple[str, WriteHook]] = self.pipeline.after_write
        self.proposal_handlers = {}  # review-item kind -> (approve, reject); filled below
        self._init_lifecycle()  # scoring adjuster, near-duplicate hook, proposal handlers
        self._init_facts()  # extraction hook, supersession and bridge adjusters

    def warm(self) -> None:
        """Start loading the embedding model in the background (servers call this at start)."""
        if self.recaller.dense_live():
            self.embedder.warm()
        if self.reranker.configured and self.reranker.live():
            threading.Thread(target=self.reranker.load, name="reranker-load", daemon=True).start()

    # -- context management ------------------------------------------------------------

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        background = getattr(self, "background", None)
        if background is not None:
            background.close()
        if not self.db.closed:
            self._flush_access()
            retry_pending(self.db)  # a purge a reader held up, if one is owed
        self.db.close()

    # -- writing -----------------------------------------------------------------------

    def _new_row(
        self,
        content: object,
        *,
        namespace: str,
        kind: str,
        tags: Iterable[str] | str | None,
        importance: object,
        metadata: Mapping[str, Any] | None,
        observed_at: datetime | str | None,
        source: str | None,
    ) -> NewRow:
        return NewRow(
            namespace=v.validate_namespace(namespace),
            kind=v.validate_kind(kind),
            content=v.validate_content(content, max_bytes=self.settings.max_content_bytes),
            tags=v.validate_tags(tags),
            importance=v.validate_importance(importance),
            source=source,
            metadata=v.validate_metadata(metadata),
            observed_at=v.parse_time(observed_at, field="observed_at"),
        )

    def store(
        self,
        content: str,
        *,
        namespace: str = "default",
        kind: str = "note",
        tags: Iterable[str] | str = (),
        importance: float = 0.5,
        metadata: Mapping[str, Any] | None = None,
        observed_at: datetime | str | None = None,
        source: str | None = None,
        supersedes: str | None = None,
    ) -> str:
        """Store one memory and return its id; the same text again returns the first id.

        ``supersedes`` names a memory this one replaces: it is closed (valid until this
        one's observed time, status superseded) in the same transaction.
        """
        row = self._new_row(
            content,
            namespace=namespace,
            kind=kind,
            tags=tags,
            importance=importance,
            metadata=metadata,
            observed_at=observed_at,
            source=source,
        )
        then = None
        if supersedes is not None:
            if not isinstance(supersedes, str) or not supersedes.strip():
                raise InvalidInput("supersedes must be the id of the memory this one replaces")
            then = self._supersedes_hook(row.namespace, supersedes)
        return self._write_rows([row], then=then)[0]

    def store_many(
        self, items: Iterable[Mapping[str, Any]], *, namespace: str = "default"
    ) -> list[str]:
        """Store several memories in one transaction (one encoding batch); ids in order.

        Each item takes the keyword arguments of :meth:`store` (``content`` required);
        an item's own ``namespace`` overrides the call's.
        """
        rows: list[NewRow] = []
        allowed = {"content", "namespace", "kind", "tags", "importance", "metadata",
                   "observed_at", "source"}
        for number, item in enumerate(items, start=1):
            if not isinstance(item, Mapping) or "content" not in item:
                raise InvalidInput(f"item {number} must be a mapping with 'content'")
            unknown = set(item) - allowed
            if unknown:
                raise InvalidInput(f"item {number} has unknown fields: {sorted(unknown)}")
            rows.append(
                self._new_row(
                    item["content"],
                    namespace=item.get("namespace", namespace),
                    kind=item.get("kind", "note"),
                    tags=item.get("tags", ()),
                    importance=item.get("importance", 0.5),
                    metadata=item.get("metadata"),
                    observed_at=item.get("observed_at"),
                    source=item.get("source"),
                )
            )
        return self._write_rows(rows)

    def store_conversation(
        self,
        turns: Sequence[Mapping[str, Any]],
        *,
        namespace: str = "default",
        session_id: str | None = None,
        observed_at: datetime | str | None = None,
        context_turns: int = 1,
        preceding: Sequence[Mapping[str, Any] | str] | None = None,
        source: str | None = None,
        secrets: SecretsPolicy = "refuse",
    ) -> list[str]:
        """Store conversation turns verbatim, each indexed with its neighbouring turns.

        A turn is a mapping with ``speaker`` and ``content`` and optional ``role``,
        ``observed_at`` and ``metadata``. Turns continue the session ``session_id`` (a new
        one if not given); ``preceding`` gives earlier turns not stored here, for context.
        ``secrets="redact"`` (captured sessions) replaces each secret by a marker instead
        of refusing the batch; :meth:`store_conversation_report` also says what it removed.
        """
        return self.store_conversation_report(
            turns, namespace=namespace, session_id=session_id, observed_at=observed_at,
            context_turns=context_turns, preceding=preceding, source=source, secrets=secrets,
        ).ids

    def store_conversation_report(
        self,
        turns: Sequence[Mapping[str, Any]],
        *,
        namespace: str = "default",
        session_id: str | None = None,
        observed_at: datetime | str | None = None,
        context_turns: int = 1,
        preceding: Sequence[Mapping[str, Any] | str] | None = None,
        source: str | None = None,
        secrets: SecretsPolicy = "redact",
    ) -> WriteResult:
        """:meth:`store_conversation` for captures: ids, how many were new, and the
        secrets removed (row, field, kind, span; never the value). Redacts by default."""
        check_policy(secrets)
        namespace = v.validate_namespace(namespace)
        if isinstance(context_turns, bool) or not isinstance(context_turns, int) or not (
            0 <= context_turns <= 10
        ):
            raise InvalidInput("context_turns must be a whole number from 0 to 10")
        if session_id is not None and (not isinstance(session_id, str) or not session_id.strip()):
            raise InvalidInput("session_id must be a non-empty string")
        session = session_id or f"s-{clock.new_id()}"
        parsed = [
            Turn.parse(number, turn, max_bytes=self.settings.max_content_bytes)
            for number, turn in enumerate(turns, start=1)
        ]
        if not parsed:
            raise InvalidInput("turns is empty; give at least one turn")
        default_time = v.parse_time(observed_at, field="observed_at")
        before = [Turn.parse_context(item) for item in preceding or []]
        with self.db.read() as conn:
            last = self.store_.session_tail(conn, namespace, session, context_turns)
        rows = plan_turns(
            parsed,
            namespace=namespace,
            session_id=session,
            default_time=default_time,
            context_turns=context_turns,
            stored_tail=last,
            preceding=before,
            source=source,
        )
        result = self.pipeline.write(rows, secrets=secrets)
        if result.redactions:
            log.info("secrets_redacted", count=len(result.redactions),
                     kinds=sorted({r.kind for r in result.redactions}))
        return result

    def _write_rows(
        self, rows: list[NewRow], then: WriteHook | None = None, *,
        secrets: SecretsPolicy = "refuse",
    ) -> list[str]:
        return self.pipeline.write(rows, then=then, secrets=secrets).ids

    def _encode(self, rows: Sequence[NewRow | MemoryRecord]) -> Any:
        """Vectors for the rows, or None when dense recall is not live here."""
        return self.pipeline.encode(rows)

    def update(
        self,
        memory_id: str,
        *,
        namespace: str,
        content: str | None = None,
        kind: str | None = None,
        tags: Iterable[str] | str | None = None,
        importance: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        observed_at: datetime | str | None = None,
        source: str | None = None,
    ) -> MemoryRecord:
        """Change the given fields of a memory; its indexes follow in the same transaction."""
        namespace = v.validate_namespace(namespace)
        fields: dict[str, Any] = {}
        if content is not None:
            fields["content"] = v.validate_content(
                content, max_bytes=self.settings.max_content_bytes
            )
        if kind is not None:
            fields["kind"] = v.validate_kind(kind)
        if tags is not None:
            fields["tags"] = v.validate_tags(tags)
        if importance is not None:
            fields["importance"] = v.validate_importance(importance)
        if metadata is not None:
            fields["metadata"] = v.validate_metadata(metadata)
        if observed_at is not None:
            fields["observed_at"] = v.parse_time(observed_at, field="observed_at")
        if source is not None:
            fields["source"] = source
        if not fields:
            raise InvalidInput("nothing to update: give at least one field to change")
        return self.pipeline.update(memory_id, namespace, fields)

    def forget(self, memory_id: str, *, namespace: str) -> bool:
        """Delete a memory from the rows and every index. False if there was none."""
        namespace = v.validate_namespace(namespace)
        with self.db.write() as tx:
            rowid = self.store_.rowid_of(tx, memory_id, namespace)
            if rowid is None:
                return False
            self._forget_rows(tx, [rowid], reason="id")  # and summaries quoting it
        purge(self.db)
        return True

    # -- reading -----------------------------------------------------------------------

    def get(self, memory_id: str, *, namespace: str) -> MemoryRecord:
        namespace = v.validate_namespace(namespace)
        with self.db.read() as conn:  # driver errors leave as ours (db.py's boundary)
            record = self.store_.get(conn, memory_id, namespace)
        if record is None:
            raise NotFound(f"no memory {memory_id!r} in namespace {namespace!r}")
        return record

    def search(
        self,
        *,
        namespace: str | Sequence[str] = "default",
        tags: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        min_importance: float | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int = 50,
        include_archived: bool = False,
        as_of: datetime | str | None = None,
        include_superseded: bool = False,
    ) -> list[MemoryRecord]:
        """List memories matching every filter, newest first (no query text).

        ``as_of`` lists what was valid then; ``include_superseded`` adds replaced memories.
        """
        where = self._filter(namespace, tags, kinds, min_importance, since, until, as_of,
                             include_archived=include_archived,
                             include_superseded=include_superseded)
        with self.db.read() as conn:
            return self.store_.list(conn, where, _limit(limit))

    def recall(
        self,
        query: str,
        *,
        namespace: str | Sequence[str] = "default",
        limit: int = 10,
        kinds: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        as_of: datetime | str | None = None,
        include_archived: bool = False,
        pure: bool = False,
        include_superseded: bool = False,
    ) -> list[Hit]:
        """The memories most relevant to ``query``, best first, searching every row.

        ``as_of`` answers from what was valid at that time (superseded memories included
        if they were current then; later ones left out). ``include_archived`` adds the
        cold tier; ``pure`` ranks by relevance alone (no lifecycle scoring: benchmarks).
        ``include_superseded`` adds replaced memories (history); each ranks just below
        what replaced it and names it in ``superseded_by``.
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query is empty; say what to recall")
        where = self._filter(namespace, tags, kinds, None, since, until, as_of,
                             include_archived=include_archived,
                             include_superseded=include_superseded)
        request = RecallRequest(query=query, where=where, limit=_limit(limit), pure=pure)
        with self.db.read() as conn:
            hits = self.recaller.recall(conn, request)
        self.access.note(hit.id for hit in hits)
        if self.access.due():
            self._flush_access()
        return hits

    def _flush_access(self) -> None:
        try:
            self.access.flush(self.db)
        except AideMemoireError as exc:  # statistics must never fail a recall
            log.warning("access_stats_not_written", error=str(exc))

    def _filter(
        self,
        namespace: str | Sequence[str],
        tags: Sequence[str] | None,
        kinds: Sequence[str] | None,
        min_importance: float | None,
        since: datetime | str | None,
        until: datetime | str | None,
        as_of: datetime | str | None = None,
        *,
        include_archived: bool = False,
        include_superseded: bool = False,
    ) -> RowFilter:
        moment = v.parse_time(as_of, field="as_of")
        return RowFilter(
            namespaces=_namespaces(namespace),
            kinds=[v.validate_kind(k) for k in kinds] if kinds else None,
            tags=v.validate_tags(tags) or None,
            min_importance=(
                v.validate_importance(min_importance) if min_importance is not None else None
            ),
            since=v.parse_time(since, field="since"),
            until=v.parse_time(until, field="until"),
            as_of=moment,
            # Back then, a memory superseded or archived since was still current.
            statuses=("active", "superseded", "archived") if moment
            else ("active", *(("archived",) if include_archived else ()),
                  *(("superseded",) if include_superseded else ())),
        )

    def status(self) -> Status:
        conn = self.db.conn()
        counts = self.store_.namespace_counts(conn)
        stages = [
            Stage(name="keyword", live=True, detail="FTS5 BM25 over every row of the namespace"),
            self._dense_stage(),
            self._rerank_stage(),
            self._facts_stage(),
            *self.lifecycle_stages(),
        ]
        return Status(
            version=__version__,
            home=str(self.settings.home),
            db_path=str(self.db.path),
            db_bytes=self.db.path.stat().st_size,
            schema_version=self.db.schema_version(),
            sqlite_driver=self.db.driver.name,
            sqlite_version=self.db.driver.sqlite_version,
            journal_mode=str(conn.execute("PRAGMA journal_mode").fetchone()[0]),
            memories=sum(counts.values()),
            namespaces=counts,
            stages=stages,
        )

    def _rerank_stage(self) -> Stage:
        reranker = self.reranker
        if not reranker.configured or not reranker.live():
            return Stage(name="rerank", live=False, detail=f"off: {reranker.error}")
        tuning = reranker.tuning
        return Stage(
            name="rerank",
            live=True,
            detail=f"cross-encoder {reranker.path} over the best {tuning.depth}, floor "
            f"{tuning.base_floor} at limit 10 (scaled by 10/limit above)",
        )

    def _dense_stage(self) -> Stage:
        hint = parts.install_hint("vectors", "embeddings")
        if hint is not None:  # both are needed: name every missing one, not the first
            return Stage(name="dense", live=False,
                         detail=f"keyword-only: dense recall needs {hint}")
        if self.db.vec_version is None:
            return Stage(name="dense", live=False, detail=f"keyword-only: {self.db.vec_error}")
        if not self.embedder.enabled:
            return Stage(name="dense", live=False, detail=f"keyword-only: {self.embedder.error}")
        if not self.embedder.check():
            return Stage(name="dense", live=False, detail=f"keyword-only: {self.embedder.error}")
        space = self.embedder.space
        if space is None:
            state = "loading" if self.embedder.loading else "loads on first use"
            return Stage(
                name="dense",
                live=True,
                detail=f"model {self.embedder.spec} ({state}); sqlite-vec {self.db.vec_version}",
            )
        return Stage(
            name="dense",
            live=True,
            detail=f"model {space.model} ({space.dim}-d, loaded, {self.embedder.runtime}); "
            f"sqlite-vec {self.db.vec_version}",
        )

    # -- export and import -------------------------------------------------------------

    def export_lines(
        self, namespace: str | None = None, *, reveal_pii: bool = False,
        with_vectors: bool = False,
    ) -> Iterator[str]:
        """JSON Lines: a header line, then one memory per line, oldest first, streamed
        in pages (a memory written while the export runs may or may not be in it).

        Personal data is masked (``[EMAIL]``...) unless ``reveal_pii`` is true.
        ``with_vectors`` adds each memory's vector of the configured model (base64
        float32) so that an import into the same embedding space need not encode again.
        """
        if namespace is not None:
            namespace = v.validate_namespace(namespace)
        with self.db.write() as tx:
            counts = self.store_.namespace_counts(tx)
            total = sum(counts.values()) if namespace is None else counts.get(namespace, 0)
            self.trust.record_export(tx, namespace, total, reveal_pii)
        header: dict[str, Any] = {
            "format": EXPORT_FORMAT, "version": EXPORT_VERSION, "namespace": namespace
        }
        with self.db.read() as conn:
            space = transfer.stored_space(conn, self.vector_tables, self.embedder)
        if with_vectors and space is not None:
            header["vectors"] = {"model": space.model, "dim": space.dim, "key": space.key}
        yield json.dumps(header)
        # Page by rowid, each page in its own short read: a generator left unfinished
        # must not hold a read transaction open (a write on this thread would then fail).
        after = 0
        while True:
            with self.db.read() as conn:
                page = self.store_.page(conn, namespace, after, EXPORT_PAGE)
                lookup = (transfer.vector_lookup(conn, self.vector_tables, space)
                          if with_vectors and space is not None else None)
                vectors = {record.id: lookup(record.id) for _, record in page} if lookup else {}
            if not page:
                return
            for _, record in page:
                line = (record if reveal_pii else self.trust.masked(record)).model_dump_json()
                vector = vectors.get(record.id)
                yield f'{line[:-1]},"vector":"{vector}"}}' if vector else line
            after = page[-1][0]

    def export(
        self, fp: IO[str], *, namespace: str | None = None, reveal_pii: bool = False,
        with_vectors: bool = False,
    ) -> int:
        """Write the export to a text stream; returns how many memories were written."""
        count = -1
        for line in self.export_lines(
            namespace, reveal_pii=reveal_pii, with_vectors=with_vectors
        ):
            fp.write(line + "\n")
            count += 1
        return count

    def import_(
        self, lines: Iterable[str], *, batch: int = 500, secrets: SecretsPolicy = "refuse"
    ) -> ImportReport:
        """Add exported memories as they were; ids already present are skipped.

        Each is validated and screened as a new write would be, whatever its status: a
        secret in any field refuses the import, or with ``secrets="redact"`` is replaced by
        ``[redacted:<kind>]`` (counted in the report) so the rest of the file loads;
        suspected injection is held for review. Then the rows go through the write pipeline
        (audited, given facts). Added memories get vectors when dense recall is live: the
        export's own when it was made in the same embedding space, else encoded here.
        """
        check_policy(secrets)
        read = added = redacted = 0
        pending: list[tuple[int, MemoryRecord]] = []
        vectors: dict[str, Any] = {}
        space: dict[str, Any] = {}
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"import line {number} is not JSON: {exc}") from None
            except RecursionError:  # json's parser recurses once per level
                raise InvalidInput(
                    f"import line {number} is nested more than {v.METADATA_MAX_DEPTH} levels "
                    "deep; flatten its metadata"
                ) from None
            if number == 1 and isinstance(data, dict) and "format" in data:
                if data.get("format") != EXPORT_FORMAT or data.get("version") != EXPORT_VERSION:
                    raise InvalidInput(
                        f"import file is {data.get('format')!r} v{data.get('version')}, "
                        f"expected {EXPORT_FORMAT!r} v{EXPORT_VERSION}"
                    )
                space = data.get("vectors") or {}
                continue
            vector = data.pop("vector", None) if isinstance(data, dict) else None
            try:
                record = MemoryRecord.model_validate(data)
            except ValueError as exc:
                raise InvalidInput(f"import line {number} is not a memory: {exc}") from None
            try:
                v.validate_record(record, max_bytes=self.settings.max_content_bytes)
            except InvalidInput as exc:
                raise type(exc)(f"import line {number}: {exc}") from None
            record, found = self.trust.screen_import(record, number, redact=secrets == "redact")
            redacted += sum(len(kinds) for kinds in found.values())
            pending.append((number, record))
            if vector is not None and space.get("dim"):
                vectors[record.id] = transfer.decode_vector(vector, int(space["dim"]), number)
            read += 1
            if len(pending) >= batch:
                added += self._import_batch(pending, vectors, space.get("key"))
                pending, vectors = [], {}
        if pending:
            added += self._import_batch(pending, vectors, space.get("key"))
        return ImportReport(read=read, added=added, skipped=read - added, redacted=redacted)

    def _import_row(self, number: int, record: MemoryRecord) -> NewRow:
        """The record as a new write, validated field by field like one."""
        try:
            return NewRow(
                namespace=v.validate_namespace(record.namespace),
                kind=v.validate_kind(record.kind),
                content=v.validate_content(record.content,
                                           max_bytes=self.settings.max_content_bytes),
                tags=v.validate_tags(record.tags),
                importance=v.validate_importance(record.importance),
                source=record.source,
                metadata=v.validate_metadata(record.metadata),
                observed_at=record.observed_at,
                session_id=record.session_id, speaker=record.speaker, role=record.role,
                position=record.position, reply_to=record.reply_to, context=record.context,
                status=record.status, id=record.id,
            )
        except InvalidInput as exc:
            raise type(exc)(f"import line {number}: {exc}") from None

    def _import_batch(
        self, batch: list[tuple[int, MemoryRecord]], given: dict[str, Any],
        given_key: str | None,
    ) -> int:
        ids = [r.id for _, r in batch]
        with self.db.read() as conn:  # screen and encode only what is new
            present = {str(i) for (i,) in conn.execute(
                f"SELECT id FROM memories WHERE id IN ({','.join('?' * len(ids))})", ids)}
        new = [(n, r) for n, r in batch if r.id not in present]
        if not new:
            return 0
        rows = [self._import_row(n, r) for n, r in new]
        live = self.recaller.dense_live() and self.embedder.wait()
        space = self.embedder.space if live else None
        reuse = {i: given[r.id] for i, (_, r) in enumerate(new)
                 if space is not None and space.key == given_key and r.id in given}
        # Screened line by line already (secrets refused or redacted, suspects held).
        result = self.pipeline.write(
            rows, action="import", records=[r for _, r in new],
            given_vectors=reuse, skip_hooks=("near_duplicates",),
        )
        return result.added

    # -- operations --------------------------------------------------------------------

    def snapshot(self) -> SnapshotInfo:
        """A consistent copy of the store in ``<home>/snapshots``, safe while others write."""
        return ops_snapshot.create(self.db, self.settings.home, actor=self.actor)

    def snapshots(self) -> list[SnapshotInfo]:
        """The snapshots of this home, newest first."""
        return ops_snapshot.list_snapshots(self.settings.home)

    def snapshot_rotate(self, keep: int = ops_snapshot.DEFAULT_KEEP) -> list[str]:
        """Delete all but the ``keep`` newest snapshots; returns the names deleted."""
        return ops_snapshot.rotate(self.db, self.settings.home, keep=keep, actor=self.actor)

    @staticmethod
    def restore(
        snapshot: str | os.PathLike[str], *, home: str | os.PathLike[str] | None = None,
        settings: Settings | None = None, actor: str = "python",
    ) -> RestoreReport:
        """Replace a home's store by a verified snapshot, moving the live file aside.

        A static method: the store being replaced may be too damaged to open. Refused
        while another process (or an open ``Memory``) has the store open.
        """
        settings = settings or Settings.from_env(home=Path(home) if home is not None else None)
        return ops_snapshot.restore(
            settings.home, snapshot, load_driver(settings.sqlite_driver), actor=actor
        )

    def doctor(self, *, repair: bool = False) -> DoctorReport:
        """Check the store, its indexes, model, permissions and audit chain; optionally
        rebuild what is derived from the rows (keyword index, vectors, permissions)."""
        checks = ops_doctor.Checks(
            self.db, self.store_, self.vector_tables, self.embedder, self.settings.home
        )
        return ops_doctor.diagnose(checks, repair=repair, reembed=self.reembed, actor=self.actor)

    def reembed(
        self, namespace: str | None = None, batch: int = 256,
        progress: ops_reembed.Progress | None = None,
    ) -> ReembedReport:
        """Encode a vector for every row lacking one in the active space (after a model
        change, or for rows stored keyword-only); resumable, one transaction per batch."""
        if namespace is not None:
            namespace = v.validate_namespace(namespace)
        return ops_reembed.reembed(
            self.db, self.store_, self.vector_tables, self.embedder, namespace=namespace,
            batch=batch, progress=progress, actor=self.actor,
        )

    # -- code index --------------------------------------------------------------------

    @property
    def code(self) -> Any:
        """The code index over this store (loaded on first use: it needs the code extra)."""
        if getattr(self, "_code", None) is None:
            parts.require("code")  # a clear error naming the extra, not ModuleNotFoundError
            from .code.index import CodeIndex

            dense = None
            if self.settings.code_dense and self.embedder.enabled and self.embedder.wait():
                from .code.vectors import EmbeddedCodeRanker

                dense = EmbeddedCodeRanker(self.embedder)
            self._code = CodeIndex(
                self.db, dense=dense, secret_files=self.settings.code_secret_files
            )
        return self._code

    def code_index(
        self, root: str | os.PathLike[str], *, progress: Any = None
    ) -> CodeIndexReport:
        """Index (or re-index, incrementally) the source tree at ``root``."""
        report: CodeIndexReport = self.code.index(root, progress=progress)
        return report

    def code_search(
        self, root: str | os.PathLike[str], query: str, *, language: str | None = None,
        limit: int = 10,
    ) -> list[CodeHit]:
        """The chunks of ``root``'s index most relevant to ``query``, best first."""
        hits: list[CodeHit] = self.code.search(root, query, language=language, limit=limit)
        return hits

    def code_symbol(
        self, root: str | os.PathLike[str], name: str, *, limit: int = 50
    ) -> list[SymbolHit]:
        """Where ``name`` is defined in ``root``'s index, then where it is used."""
        hits: list[SymbolHit] = self.code.symbol(root, name, limit=limit)
        return hits
