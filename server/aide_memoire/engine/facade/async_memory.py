"""``AsyncMemory``: the same engine for asyncio programs, each call in a worker thread.

Generated from ``memory.py`` by ``async_codegen.py`` (its docstring says how, and what
``async_base.py`` adds); do not edit.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import IO, TYPE_CHECKING, Any, Unpack
from ..ops import reembed as ops_reembed
from ..ops import snapshot as ops_snapshot
from ..runtime.pipeline import SecretsPolicy, WriteResult

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

from .async_base import AsyncBase
from .memory import Memory

__all__ = ["AsyncMemory"]


class AsyncMemory(AsyncBase):
    """Async twin of :class:`Memory`; use ``async with``."""

    async def store(
        self,
        content: str,
        *,
        namespace: str = "default",
        supersedes: str | None = None,
        **fields: Unpack[StoreFields],
    ) -> str:
        """Store one memory and return its id; the same text again returns the first id. ``fields``:
        kind, tags, importance, metadata, observed_at, source (core/fields.py)."""
        return await self._run(
            self.sync.store, content, namespace=namespace, supersedes=supersedes, **fields,
        )

    async def store_many(
        self,
        items: Iterable[Mapping[str, Any]],
        *,
        namespace: str = "default",
        secrets: SecretsPolicy = "redact",
    ) -> list[str]:
        """Store several memories in one transaction (one encoding batch); ids in order. Each item
        on its own: a secret is redacted span by span, not the batch refused (``secrets="refuse"``:
        all or nothing)."""
        return await self._run(self.sync.store_many, items, namespace=namespace, secrets=secrets)

    async def store_many_report(
        self,
        items: Iterable[Mapping[str, Any]],
        *,
        namespace: str = "default",
        secrets: SecretsPolicy = "redact",
    ) -> WriteResult:
        """:meth:`store_many` with its report: ids, new count, secrets removed."""
        return await self._run(
            self.sync.store_many_report, items, namespace=namespace, secrets=secrets,
        )

    async def store_conversation(
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
        """Store conversation turns verbatim, each indexed with its neighbouring turns. Each turn on
        its own: a secret is redacted span by span, not the call refused (``secrets="refuse"``: all
        or nothing)."""
        return await self._run(
            self.sync.store_conversation, turns, namespace=namespace, session_id=session_id,
            observed_at=observed_at, context_turns=context_turns, preceding=preceding,
            source=source, secrets=secrets,
        )

    async def store_conversation_report(
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
        return await self._run(
            self.sync.store_conversation_report, turns, namespace=namespace, session_id=session_id,
            observed_at=observed_at, context_turns=context_turns, preceding=preceding,
            source=source, secrets=secrets,
        )

    async def update(
        self,
        memory_id: str,
        *,
        namespace: str,
        **changes: Unpack[UpdateFields],
    ) -> MemoryRecord:
        """Change the given fields of a memory; its indexes follow in the same transaction."""
        return await self._run(self.sync.update, memory_id, namespace=namespace, **changes)

    async def forget(
        self,
        memory_id: str,
        *,
        namespace: str,
    ) -> bool:
        """Delete a memory from the rows and every index. False if there was none."""
        return await self._run(self.sync.forget, memory_id, namespace=namespace)

    async def forget_many(
        self,
        memory_ids: Sequence[str],
        *,
        namespace: str,
    ) -> int:
        """Delete many memories of a namespace, purging the indexes once for all of them (a forget
        at a time rewrites the keyword index each time); how many were found."""
        return await self._run(self.sync.forget_many, memory_ids, namespace=namespace)

    async def get(
        self,
        memory_id: str,
        *,
        namespace: str,
    ) -> MemoryRecord:
        return await self._run(self.sync.get, memory_id, namespace=namespace)

    async def search(
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
        return await self._run(
            self.sync.search, namespace=namespace, tags=tags, kinds=kinds,
            min_importance=min_importance, since=since, until=until, limit=limit,
            include_archived=include_archived, as_of=as_of, include_superseded=include_superseded,
            **equals,
        )

    async def recall(
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
        return await self._run(
            self.sync.recall, query, namespace=namespace, limit=limit, kinds=kinds, tags=tags,
            since=since, until=until, as_of=as_of, include_archived=include_archived, pure=pure,
            include_superseded=include_superseded, **equals,
        )

    async def export(
        self,
        fp: IO[str],
        *,
        namespace: str | None = None,
        reveal_pii: bool = False,
        with_vectors: bool = False,
    ) -> int:
        """Write the export to a text stream; returns how many memories were written."""
        return await self._run(
            self.sync.export, fp, namespace=namespace, reveal_pii=reveal_pii,
            with_vectors=with_vectors,
        )

    async def import_(
        self,
        lines: Iterable[str],
        *,
        batch: int = 500,
        secrets: SecretsPolicy = "skip",
    ) -> ImportReport:
        """Add exported memories as they were; ids already present are skipped."""
        return await self._run(self.sync.import_, lines, batch=batch, secrets=secrets)

    async def facts(
        self,
        subject: str,
        *,
        namespace: str = "default",
        predicate: str | None = None,
        as_of: datetime | str | None = None,
        include_history: bool = False,
        limit: int = 100,
    ) -> list[Fact]:
        """Facts about ``subject`` holding now (or at ``as_of``), or all of them."""
        return await self._run(
            self.sync.facts, subject, namespace=namespace, predicate=predicate, as_of=as_of,
            include_history=include_history, limit=limit,
        )

    async def memory_facts(
        self,
        memory_id: str,
        *,
        namespace: str,
    ) -> list[Fact]:
        """The facts read from one memory (closed ones too)."""
        return await self._run(self.sync.memory_facts, memory_id, namespace=namespace)

    async def get_detail(
        self,
        memory_id: str,
        *,
        namespace: str,
    ) -> MemoryDetail:
        """A memory with its facts (what ``get`` shows in the CLI and over MCP)."""
        return await self._run(self.sync.get_detail, memory_id, namespace=namespace)

    async def related(
        self,
        entity_or_id: str,
        *,
        namespace: str = "default",
        depth: int = 1,
        limit: int = 20,
        memories: bool = True,
    ) -> RelatedResult:
        """Entities linked to an entity or a memory's entities, with memories naming them."""
        return await self._run(
            self.sync.related, entity_or_id, namespace=namespace, depth=depth, limit=limit,
            memories=memories,
        )

    async def entity_names(
        self,
        prefix: str,
        *,
        namespace: str = "default",
        limit: int = 100,
    ) -> list[str]:
        """Entity names starting with ``prefix`` (normalised), for argument completion."""
        return await self._run(self.sync.entity_names, prefix, namespace=namespace, limit=limit)

    async def feedback(
        self,
        memory_id: str,
        outcome: str,
        *,
        namespace: str = "default",
    ) -> FeedbackResult:
        """Record whether a recalled memory helped: 'helpful', 'unhelpful' or 'wrong'."""
        return await self._run(self.sync.feedback, memory_id, outcome, namespace=namespace)

    async def maintain(
        self,
        namespace: str = "default",
        *,
        apply: bool = False,
        auto_only: bool = False,
    ) -> MaintenanceReport:
        """Plan maintenance of a namespace; with ``apply``, act and stage proposals."""
        return await self._run(self.sync.maintain, namespace, apply=apply, auto_only=auto_only)

    async def maintenance_status(
        self,
        namespace: str | None = None,
    ) -> MaintenanceStatus:
        """When maintenance last ran in each namespace, what waits for review, what is live."""
        return await self._run(self.sync.maintenance_status, namespace)

    async def lifecycle_stages(
        self,
    ) -> list[Stage]:
        """The lifecycle parts of recall and writing, for ``status()``."""
        return await self._run(self.sync.lifecycle_stages)

    async def vector_table(
        self,
        conn: Connection,
    ) -> str | None:
        """The vec0 table of the configured model, loading it if need be; None if off."""
        return await self._run(self.sync.vector_table, conn)

    async def consolidate(
        self,
        namespace: str = "default",
        *,
        dry_run: bool = False,
        limit: int = 20,
    ) -> ConsolidationReport:
        """Cluster related memories and write an extractive summary for each cluster."""
        return await self._run(self.sync.consolidate, namespace, dry_run=dry_run, limit=limit)

    async def promote(
        self,
        memory_id: str,
        *,
        namespace: str = "default",
    ) -> RestoreResult:
        """Bring an archived (cold) memory back to the active tier, screened again."""
        return await self._run(self.sync.promote, memory_id, namespace=namespace)

    async def archive(
        self,
        memory_id: str,
        *,
        namespace: str = "default",
    ) -> RestoreResult:
        """Move an active memory to the cold tier by hand."""
        return await self._run(self.sync.archive, memory_id, namespace=namespace)

    async def links(
        self,
        memory_id: str,
    ) -> list[dict[str, Any]]:
        """The lifecycle links of a memory: duplicates, merges, summaries and their sources."""
        return await self._run(self.sync.links, memory_id)

    async def review_queue(
        self,
        namespace: str | None = None,
        limit: int = 50,
        *,
        status: str = "pending",
        kind: str | None = None,
    ) -> list[ReviewItem]:
        """Items waiting for a decision (or in ``status``), oldest first, with evidence."""
        return await self._run(self.sync.review_queue, namespace, limit, status=status, kind=kind)

    async def review_decide(
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
        return await self._run(
            self.sync.review_decide, item_id, decision, namespace=namespace, text=text, actor=actor,
            note=note,
        )

    async def audit_verify(
        self,
    ) -> AuditReport:
        """Check the hash chain, its anchor outside the file, and every memory's text."""
        return await self._run(self.sync.audit_verify)

    async def audit_cross_namespace_read(
        self,
        namespace: str | None,
        *,
        what: str,
        home: str,
    ) -> None:
        """Record that a caller whose own namespace is ``home`` read ``namespace`` (None: several
        namespaces at once) through ``what`` (a tool or command name)."""
        return await self._run(
            self.sync.audit_cross_namespace_read, namespace, what=what, home=home,
        )

    async def audit_history(
        self,
        memory_id: str,
    ) -> list[AuditEvent]:
        """Every audit event about one memory, oldest first (hashes, never content)."""
        return await self._run(self.sync.audit_history, memory_id)

    async def forget_matching(
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
        return await self._run(
            self.sync.forget_matching, namespace=namespace, tag=tag, query=query, dry_run=dry_run,
            limit=limit, only_id=only_id,
        )

    async def status(
        self,
    ) -> Status:
        """What is stored, where, with which SQLite, and which stages are live."""
        return await self._run(self.sync.status)

    async def snapshot(
        self,
    ) -> SnapshotInfo:
        """A consistent copy of the store in ``<home>/snapshots``, safe while others write."""
        return await self._run(self.sync.snapshot)

    async def snapshots(
        self,
    ) -> list[SnapshotInfo]:
        """The snapshots of this home, newest first."""
        return await self._run(self.sync.snapshots)

    async def snapshot_rotate(
        self,
        keep: int = ops_snapshot.DEFAULT_KEEP,
    ) -> list[str]:
        """Delete all but the ``keep`` newest snapshots; returns the names deleted."""
        return await self._run(self.sync.snapshot_rotate, keep)

    async def doctor(
        self,
        *,
        repair: bool = False,
    ) -> DoctorReport:
        """Check the store, its indexes, model, permissions and audit chain."""
        return await self._run(self.sync.doctor, repair=repair)

    async def reembed(
        self,
        namespace: str | None = None,
        batch: int = 256,
        progress: ops_reembed.Progress | None = None,
    ) -> ReembedReport:
        """Encode a vector for every row lacking one in the active space; resumable."""
        return await self._run(self.sync.reembed, namespace, batch, progress)

    async def code_index(
        self,
        root: str | os.PathLike[str],
        *,
        progress: Progress | None = None,
    ) -> CodeIndexReport:
        """Index (or re-index, incrementally) the source tree at ``root``."""
        return await self._run(self.sync.code_index, root, progress=progress)

    async def code_search(
        self,
        root: str | os.PathLike[str],
        query: str,
        *,
        language: str | None = None,
        limit: int = 10,
        kind: str | None = None,
    ) -> list[CodeHit]:
        """The chunks of ``root``'s index most relevant to ``query``, best first (``kind`` 'code' or
        'docs': only source files or only prose pages)."""
        return await self._run(
            self.sync.code_search, root, query, language=language, limit=limit, kind=kind,
        )

    async def code_links(
        self,
        root: str | os.PathLike[str],
        *,
        path: str | None = None,
    ) -> list[DocLink]:
        """The links of ``root``'s indexed prose pages, each resolved (or missing)."""
        return await self._run(self.sync.code_links, root, path=path)

    async def code_symbol(
        self,
        root: str | os.PathLike[str],
        name: str,
        *,
        limit: int = 50,
    ) -> list[SymbolHit]:
        """Where ``name`` is defined in ``root``'s index, then where it is used."""
        return await self._run(self.sync.code_symbol, root, name, limit=limit)

    async def wiki_export(
        self,
        folder: str | os.PathLike[str],
        *,
        namespace: str = "default",
        reveal_pii: bool = False,
    ) -> WikiExportReport:
        """Write a namespace as linked Markdown pages (entities, decisions, an index)."""
        return await self._run(
            self.sync.wiki_export, folder, namespace=namespace, reveal_pii=reveal_pii,
        )

    async def wiki_lint(
        self,
        folder: str | os.PathLike[str],
        *,
        namespace: str | None = None,
    ) -> WikiLintReport:
        """Broken links, orphans, missing backlinks and provenance, stale current facts."""
        return await self._run(self.sync.wiki_lint, folder, namespace=namespace)
