"""``Memory``: the engine's one front door for Python programs, the CLI and the MCP server.

A thin facade: :func:`~.context.open_context` makes the parts in one order,
:func:`~.services.start_services` builds the services over them, and every method
here hands its call to the one service that owns the job. The services' own
docstrings say more.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Unpack

from ..core.settings import Settings
from ..ops import reembed as ops_reembed
from ..ops import snapshot as ops_snapshot
from ..runtime.context import open_context
from ..runtime.pipeline import SecretsPolicy, WriteResult
from ..services import start_services
from ..services.operations import OperationsService
from .internals import Internals

if TYPE_CHECKING:
    from ..code.index import CodeIndex, Progress
    from ..code.models import CodeHit, CodeIndexReport, DocLink, SymbolHit
    from ..core.models import (
        FieldFilters,
        Hit,
        ImportReport,
        MemoryRecord,
        Stage,
        Status,
        StoreFields,
        UpdateFields,
    )
    from ..facts.models import Fact, MemoryDetail, RelatedResult
    from ..lifecycle.models import (
        ConsolidationReport,
        FeedbackResult,
        MaintenanceReport,
        MaintenanceStatus,
        RestoreResult,
    )
    from ..ops.models import DoctorReport, ReembedReport, RestoreReport, SnapshotInfo
    from ..storage.protocol import Connection
    from ..trust.models import AuditEvent, AuditReport, ForgetReport, ReviewDecision, ReviewItem
    from ..wiki.models import WikiExportReport, WikiLintReport

__all__ = ["Memory"]


class Memory:
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
        self._ctx = open_context(settings)
        try:
            self._services = start_services(self._ctx)
        except BaseException:
            self._ctx.close()
            raise

    # -- the parts ---------------------------------------------------------------------

    @property
    def internals(self) -> Internals:
        """The engine's parts (database, store, embedder, recaller, services ...): for the
        edge modules tests/test_contracts.py names, tests and benchmarks; not a stable API."""
        return Internals(self._ctx, self._services)

    @property
    def settings(self) -> Settings:
        return self._ctx.settings

    @property
    def code(self) -> CodeIndex:
        """The code index over this store (loaded on first use: it needs the code extra)."""
        return self._services.code.index

    # -- life --------------------------------------------------------------------------

    def warm(self) -> None:
        """Start loading the embedding model in the background (servers call this at start)."""
        self._services.recall.warm()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the background runner, flush what is owed, close the file. Idempotent."""
        self._services.close()
        self._ctx.close()

    # -- who ---------------------------------------------------------------------------

    @property
    def actor(self) -> str:
        """Who the audit log names for calls made now ('python' unless an edge says)."""
        return self._services.trust.actor

    @actor.setter
    def actor(self, value: str) -> None:
        self._services.trust.actor = value

    def acting_as(self, actor: str) -> contextlib.AbstractContextManager[None]:
        """Attribute calls inside the block (this thread or task) to ``actor``."""
        return self._services.trust.acting_as(actor)

    # -- records -----------------------------------------------------------------------

    def store(
        self,
        content: str,
        *,
        namespace: str = "default",
        supersedes: str | None = None,
        **fields: Unpack[StoreFields],
    ) -> str:
        """Store one memory and return its id; the same text again returns the first id.
        ``fields``: kind, tags, importance, metadata, observed_at, source (core/fields.py)."""
        return self._services.records.store(
            content, namespace=namespace, supersedes=supersedes, **fields
        )

    def store_many(
        self, items: Iterable[Mapping[str, Any]], *, namespace: str = "default",
        secrets: SecretsPolicy = "redact",
    ) -> list[str]:
        """Store several memories in one transaction (one encoding batch); ids in order.
        Each item on its own: a secret is redacted span by span, not the batch refused
        (``secrets="refuse"``: all or nothing)."""
        return self._services.records.store_many(items, namespace=namespace, secrets=secrets)

    def store_many_report(
        self, items: Iterable[Mapping[str, Any]], *, namespace: str = "default",
        secrets: SecretsPolicy = "redact",
    ) -> WriteResult:
        """:meth:`store_many` with its report: ids, new count, secrets removed."""
        return self._services.records.store_many_report(items, namespace=namespace,
                                                        secrets=secrets)

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
        secrets: SecretsPolicy = "redact",
    ) -> list[str]:
        """Store conversation turns verbatim, each indexed with its neighbouring turns.
        Each turn on its own: a secret is redacted span by span, not the call refused
        (``secrets="refuse"``: all or nothing)."""
        return self._services.records.store_conversation(
            turns, namespace=namespace, session_id=session_id, observed_at=observed_at,
            context_turns=context_turns, preceding=preceding, source=source, secrets=secrets,
        )

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
        """:meth:`store_conversation` for captures: ids, new count, secrets removed."""
        return self._services.records.store_conversation_report(
            turns, namespace=namespace, session_id=session_id, observed_at=observed_at,
            context_turns=context_turns, preceding=preceding, source=source, secrets=secrets,
        )

    def update(
        self, memory_id: str, *, namespace: str, **changes: Unpack[UpdateFields]
    ) -> MemoryRecord:
        """Change the given fields of a memory; its indexes follow in the same transaction."""
        return self._services.records.update(memory_id, namespace=namespace, **changes)

    def forget(self, memory_id: str, *, namespace: str) -> bool:
        """Delete a memory from the rows and every index. False if there was none."""
        return self._services.trust.forget(memory_id, namespace=namespace)

    def forget_many(self, memory_ids: Sequence[str], *, namespace: str) -> int:
        """Delete many memories of a namespace, purging the indexes once for all of them
        (a forget at a time rewrites the keyword index each time); how many were found."""
        return self._services.trust.forget_many(memory_ids, namespace=namespace)

    def get(self, memory_id: str, *, namespace: str) -> MemoryRecord:
        return self._services.records.get(memory_id, namespace=namespace)

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
        **equals: Unpack[FieldFilters],
    ) -> list[MemoryRecord]:
        """List memories matching every filter, newest first (no query text)."""
        return self._services.records.search(
            namespace=namespace, tags=tags, kinds=kinds, min_importance=min_importance,
            since=since, until=until, limit=limit, include_archived=include_archived,
            as_of=as_of, include_superseded=include_superseded, **equals,
        )

    # -- recall ------------------------------------------------------------------------

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
        **equals: Unpack[FieldFilters],
    ) -> list[Hit]:
        """The memories most relevant to ``query``, best first, searching every row."""
        return self._services.recall.recall(
            query, namespace=namespace, limit=limit, kinds=kinds, tags=tags, since=since,
            until=until, as_of=as_of, include_archived=include_archived, pure=pure,
            include_superseded=include_superseded, **equals,
        )

    # -- export and import -------------------------------------------------------------

    def export_lines(
        self, namespace: str | None = None, *, reveal_pii: bool = False,
        with_vectors: bool = False,
    ) -> Iterator[str]:
        """JSON Lines: a header line, then one memory per line, oldest first, in pages."""
        return self._services.exchange.export_lines(
            namespace, reveal_pii=reveal_pii, with_vectors=with_vectors
        )

    def export(
        self, fp: IO[str], *, namespace: str | None = None, reveal_pii: bool = False,
        with_vectors: bool = False,
    ) -> int:
        """Write the export to a text stream; returns how many memories were written."""
        return self._services.exchange.export(
            fp, namespace=namespace, reveal_pii=reveal_pii, with_vectors=with_vectors
        )

    def import_(
        self, lines: Iterable[str], *, batch: int = 500, secrets: SecretsPolicy = "skip"
    ) -> ImportReport:
        """Add exported memories as they were; ids already present are skipped."""
        return self._services.exchange.import_(lines, batch=batch, secrets=secrets)

    # -- facts -------------------------------------------------------------------------

    def facts(
        self, subject: str, *, namespace: str = "default", predicate: str | None = None,
        as_of: datetime | str | None = None, include_history: bool = False, limit: int = 100,
    ) -> list[Fact]:
        """Facts about ``subject`` holding now (or at ``as_of``), or all of them."""
        return self._services.facts.facts(
            subject, namespace=namespace, predicate=predicate, as_of=as_of,
            include_history=include_history, limit=limit,
        )

    def memory_facts(self, memory_id: str, *, namespace: str) -> list[Fact]:
        """The facts read from one memory (closed ones too)."""
        return self._services.facts.memory_facts(memory_id, namespace=namespace)

    def get_detail(self, memory_id: str, *, namespace: str) -> MemoryDetail:
        """A memory with its facts (what ``get`` shows in the CLI and over MCP)."""
        return self._services.facts.get_detail(memory_id, namespace=namespace)

    def related(
        self, entity_or_id: str, *, namespace: str = "default", depth: int = 1,
        limit: int = 20, memories: bool = True,
    ) -> RelatedResult:
        """Entities linked to an entity or a memory's entities, with memories naming them."""
        return self._services.facts.related(
            entity_or_id, namespace=namespace, depth=depth, limit=limit, memories=memories
        )

    def entity_names(self, prefix: str, *, namespace: str = "default",
                     limit: int = 100) -> list[str]:
        """Entity names starting with ``prefix`` (normalised), for argument completion."""
        return self._services.facts.entity_names(prefix, namespace=namespace, limit=limit)

    # -- lifecycle ---------------------------------------------------------------------

    def feedback(
        self, memory_id: str, outcome: str, *, namespace: str = "default"
    ) -> FeedbackResult:
        """Record whether a recalled memory helped: 'helpful', 'unhelpful' or 'wrong'."""
        return self._services.lifecycle.feedback(memory_id, outcome, namespace=namespace)

    def maintain(
        self, namespace: str = "default", *, apply: bool = False, auto_only: bool = False
    ) -> MaintenanceReport:
        """Plan maintenance of a namespace; with ``apply``, act and stage proposals."""
        return self._services.lifecycle.maintain(namespace, apply=apply, auto_only=auto_only)

    def maintenance_status(self, namespace: str | None = None) -> MaintenanceStatus:
        """When maintenance last ran in each namespace, what waits for review, what is live."""
        return self._services.lifecycle.maintenance_status(namespace)

    def lifecycle_stages(self) -> list[Stage]:
        """The lifecycle parts of recall and writing, for ``status()``."""
        return self._services.lifecycle.lifecycle_stages()

    def vector_table(self, conn: Connection) -> str | None:
        """The vec0 table of the configured model, loading it if need be; None if off."""
        return self._services.lifecycle.vector_table(conn)

    def consolidate(
        self, namespace: str = "default", *, dry_run: bool = False, limit: int = 20
    ) -> ConsolidationReport:
        """Cluster related memories and write an extractive summary for each cluster."""
        return self._services.lifecycle.consolidate(namespace, dry_run=dry_run, limit=limit)

    def promote(self, memory_id: str, *, namespace: str = "default") -> RestoreResult:
        """Bring an archived (cold) memory back to the active tier, screened again."""
        return self._services.lifecycle.promote(memory_id, namespace=namespace)

    def archive(self, memory_id: str, *, namespace: str = "default") -> RestoreResult:
        """Move an active memory to the cold tier by hand."""
        return self._services.lifecycle.archive(memory_id, namespace=namespace)

    def links(self, memory_id: str) -> list[dict[str, Any]]:
        """The lifecycle links of a memory: duplicates, merges, summaries and their sources."""
        return self._services.lifecycle.links(memory_id)

    # -- trust -------------------------------------------------------------------------

    def review_queue(
        self,
        namespace: str | None = None,
        limit: int = 50,
        *,
        status: str = "pending",
        kind: str | None = None,
    ) -> list[ReviewItem]:
        """Items waiting for a decision (or in ``status``), oldest first, with evidence."""
        return self._services.trust.review_queue(namespace, limit, status=status, kind=kind)

    def review_decide(
        self,
        item_id: str,
        decision: str,
        *,
        namespace: str | None = None,
        text: str | None = None,
        actor: str | None = None,
        note: str | None = None,
    ) -> ReviewDecision:
        """Approve, reject or edit-then-approve an item, once."""
        return self._services.trust.review_decide(
            item_id, decision, namespace=namespace, text=text, actor=actor, note=note
        )

    def audit_verify(self) -> AuditReport:
        """Check the hash chain, its anchor outside the file, and every memory's text."""
        return self._services.trust.audit_verify()

    def audit_cross_namespace_read(self, namespace: str | None, *, what: str,
                                   home: str) -> None:
        """Record that a caller whose own namespace is ``home`` read ``namespace`` (None:
        several namespaces at once) through ``what`` (a tool or command name)."""
        self._services.trust.audit_cross_namespace_read(namespace, what=what, home=home)

    def audit_history(self, memory_id: str) -> list[AuditEvent]:
        """Every audit event about one memory, oldest first (hashes, never content)."""
        return self._services.trust.audit_history(memory_id)

    def forget_matching(
        self,
        *,
        namespace: str,
        tag: str | None = None,
        query: str | None = None,
        dry_run: bool = False,
        limit: int = 1000,
        only_id: str | None = None,
    ) -> ForgetReport:
        """Forget every memory with ``tag`` and/or matching all words of ``query``."""
        return self._services.trust.forget_matching(
            namespace=namespace, tag=tag, query=query, dry_run=dry_run, limit=limit,
            only_id=only_id,
        )

    # -- operations --------------------------------------------------------------------

    def status(self) -> Status:
        """What is stored, where, with which SQLite, and which stages are live."""
        return self._services.operations.status()

    def snapshot(self) -> SnapshotInfo:
        """A consistent copy of the store in ``<home>/snapshots``, safe while others write."""
        return self._services.operations.snapshot()

    def snapshots(self) -> list[SnapshotInfo]:
        """The snapshots of this home, newest first."""
        return self._services.operations.snapshots()

    def snapshot_rotate(self, keep: int = ops_snapshot.DEFAULT_KEEP) -> list[str]:
        """Delete all but the ``keep`` newest snapshots; returns the names deleted."""
        return self._services.operations.snapshot_rotate(keep)

    @staticmethod
    def restore(
        snapshot: str | os.PathLike[str], *, home: str | os.PathLike[str] | None = None,
        settings: Settings | None = None, actor: str = "python",
    ) -> RestoreReport:
        """Replace a home's store by a verified snapshot (static: it may not open)."""
        return OperationsService.restore(snapshot, home=home, settings=settings, actor=actor)

    def doctor(self, *, repair: bool = False) -> DoctorReport:
        """Check the store, its indexes, model, permissions and audit chain."""
        return self._services.operations.doctor(repair=repair)

    def reembed(
        self, namespace: str | None = None, batch: int = 256,
        progress: ops_reembed.Progress | None = None,
    ) -> ReembedReport:
        """Encode a vector for every row lacking one in the active space; resumable."""
        return self._services.operations.reembed(namespace, batch, progress)

    # -- code index --------------------------------------------------------------------

    def code_index(
        self, root: str | os.PathLike[str], *, progress: Progress | None = None
    ) -> CodeIndexReport:
        """Index (or re-index, incrementally) the source tree at ``root``."""
        return self._services.code.code_index(root, progress=progress)

    def code_search(
        self, root: str | os.PathLike[str], query: str, *, language: str | None = None,
        limit: int = 10, kind: str | None = None,
    ) -> list[CodeHit]:
        """The chunks of ``root``'s index most relevant to ``query``, best first
        (``kind`` 'code' or 'docs': only source files or only prose pages)."""
        return self._services.code.code_search(
            root, query, language=language, limit=limit, kind=kind
        )

    def code_links(
        self, root: str | os.PathLike[str], *, path: str | None = None
    ) -> list[DocLink]:
        """The links of ``root``'s indexed prose pages, each resolved (or missing)."""
        return self._services.code.code_links(root, path=path)

    def code_symbol(
        self, root: str | os.PathLike[str], name: str, *, limit: int = 50
    ) -> list[SymbolHit]:
        """Where ``name`` is defined in ``root``'s index, then where it is used."""
        return self._services.code.code_symbol(root, name, limit=limit)

    # -- wiki --------------------------------------------------------------------------

    def wiki_export(
        self, folder: str | os.PathLike[str], *, namespace: str = "default",
        reveal_pii: bool = False,
    ) -> WikiExportReport:
        """Write a namespace as linked Markdown pages (entities, decisions, an index)."""
        return self._services.wiki.export(folder, namespace=namespace, reveal_pii=reveal_pii)

    def wiki_lint(
        self, folder: str | os.PathLike[str], *, namespace: str | None = None
    ) -> WikiLintReport:
        """Broken links, orphans, missing backlinks and provenance, stale current facts."""
        return self._services.wiki.lint(folder, namespace=namespace)
