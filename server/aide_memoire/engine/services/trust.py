"""The trust service: review queue, audit log, forgetting (by id or filter), who acts."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core import validate as v
from ..core.errors import InvalidContent, InvalidInput, NotFound
from ..lifecycle import tiers
from ..trust import audit, derived, forget, review
from ..trust.models import AuditEvent, AuditReport, ForgetReport, ReviewDecision, ReviewItem
from ..trust.screen import refuse_secrets, screen_text

if TYPE_CHECKING:
    from ..runtime.context import EngineContext, ProposalHandler
    from ..storage.protocol import Connection

__all__ = ["TrustService"]

_STATUS_OF = {"approve": "approved", "edit": "approved", "reject": "rejected"}
_REVIEW_LIMIT = 1000
FORGET_BATCH = 500  # memories deleted per write transaction by forget_many


class TrustService:
    """Review decisions apply the kinds registered in ``ctx.proposals``."""

    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx
        self.db = ctx.db
        self.store = ctx.store
        self.trust = ctx.trust
        self.settings = ctx.settings

    def forget(self, memory_id: str, *, namespace: str) -> bool:
        """Delete a memory from the rows and every index. False if there was none."""
        namespace = v.validate_namespace(namespace)
        with self.db.write() as tx:
            rowid = self.store.rowid_of(tx, memory_id, namespace)
            if rowid is None:
                return False
            self._forget_rows(tx, [rowid], reason="id")  # and summaries quoting it
        self._purge()
        return True

    def forget_many(self, memory_ids: Sequence[str], *, namespace: str) -> int:
        """Delete many memories of a namespace, then purge once; how many were found.

        A forget purges at once, and the purge rewrites the whole keyword index (its cost
        grows with the store: 6.7 s a forget at 300k memories, docs/benchmarks.md). Here
        the rows go in short transactions of ``FORGET_BATCH`` (other writers get the
        lock in between) and the index is rewritten once for all of them.
        """
        namespace = v.validate_namespace(namespace)
        if isinstance(memory_ids, str) or not all(
                isinstance(i, str) and i for i in memory_ids):
            raise InvalidInput("memory_ids must be a list of non-empty id strings")
        found = 0
        ids = list(dict.fromkeys(memory_ids))
        for start in range(0, len(ids), FORGET_BATCH):
            with self.db.write() as tx:
                rowids = [r for r in (self.store.rowid_of(tx, i, namespace)
                                      for i in ids[start : start + FORGET_BATCH])
                          if r is not None]
                if rowids:
                    self._forget_rows(tx, rowids, reason="id")
                found += len(rowids)
        if found:
            self._purge()
        return found

    def _purge(self) -> bool:
        """Forget's purge: the blocks' int8 copies of the forgotten vectors first (in
        their own short transaction), then the keyword index and the WAL."""
        with self.db.write() as tx:
            self.store.vectors.compact_blocks(tx)
        return forget.purge(self.db, self.store.keywords)

    def _forget_rows(self, tx: Connection, rowids: list[int], *, reason: str) -> list[str]:
        """Forget rows and what quotes them (summaries); returns the derived ids forgotten.

        A forgotten summary's other sources, archived into it, become active again.
        """
        # The debt of a purge, in the deleting transaction: a crash after this commit
        # leaves it recorded, and the next open finishes it (trust/forget.py).
        forget.owe_purge(tx, reason)
        derived_ids: list[str] = []
        done: set[int] = set()
        queue = [(rowid, reason) for rowid in rowids]
        while queue:
            rowid, why = queue.pop(0)
            if rowid in done:
                continue
            done.add(rowid)
            found = self.store.identity(tx, rowid)
            if found is None:
                continue
            memory_id, namespace, _ = found
            for summary_rowid, summary_id, others in derived.summaries_of(
                tx, memory_id, namespace, self.store
            ):
                if summary_rowid in done:
                    continue
                if summary_rowid not in rowids:  # chosen anyway: not "derived"
                    derived_ids.append(summary_id)
                queue.append((summary_rowid, f"summary of forgotten memory {memory_id}"))
                for other in others:
                    tiers.restore(tx, self.store, other, namespace, actor=self.actor)
            self.trust.record_forget(tx, rowid, reason=why)
            self.store.delete(tx, rowid)
        return derived_ids

    # -- who ---------------------------------------------------------------------------

    @property
    def actor(self) -> str:
        """Who the audit log names for calls made now ('python' unless an edge says)."""
        return self.trust.actor

    @actor.setter
    def actor(self, value: str) -> None:
        if not isinstance(value, str) or not value.strip() or len(value) > 200:
            raise InvalidInput("actor must be a short non-empty string such as 'cli'")
        self.trust.default_actor = value

    def acting_as(self, actor: str) -> contextlib.AbstractContextManager[None]:
        """Attribute calls inside the block (this thread or task) to ``actor``."""
        return self.trust.acting_as(actor)

    # -- review queue ------------------------------------------------------------------

    def review_queue(
        self,
        namespace: str | None = None,
        limit: int = 50,
        *,
        status: str = "pending",
        kind: str | None = None,
    ) -> list[ReviewItem]:
        """Items waiting for a decision (or in ``status``), oldest first, with evidence."""
        if namespace is not None:
            namespace = v.validate_namespace(namespace)
        if status not in ("pending", "approved", "rejected", "expired"):
            raise InvalidInput("status must be pending, approved, rejected or expired")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= _REVIEW_LIMIT:
            raise InvalidInput(f"limit must be a whole number from 1 to {_REVIEW_LIMIT}")
        return review.list_items(
            self.db.conn(), namespace=namespace, status=status, kind=kind, limit=limit
        )

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
        """Approve, reject or edit-then-approve an item, once: a second decision is refused.

        With ``namespace``, only an item of that namespace can be decided: an item of
        another is reported as not found (its existence is not revealed). Agent-facing
        edges always pass their session's namespace.

        Approving a held memory makes it recallable; rejecting deletes it (row and
        indexes) and keeps the decision; ``edit`` replaces its text, which must pass the
        screen again, and approves it.
        """
        if namespace is not None:
            namespace = v.validate_namespace(namespace)
        if decision not in _STATUS_OF:
            raise InvalidInput(f"decision must be approve, reject or edit, not {decision!r}")
        if note is not None:
            refuse_secrets({"note": note})  # a note is kept and shown with the decision
        if decision == "edit":
            text = self._screened_edit(text)
        elif text is not None:
            raise InvalidInput("text is only for the 'edit' decision")
        who = actor or self.actor
        purged = False
        with self.trust.acting_as(who):
            prepared = (None if decision == "reject"
                        else self._prepare_approval(item_id, namespace))
        with self.trust.acting_as(who), self.db.write() as tx:
            item = review.get_item(tx, item_id)
            if item is None or (namespace is not None and item.namespace != namespace):
                where = f" in namespace {namespace!r}" if namespace is not None else ""
                raise NotFound(f"no review item {item_id!r}{where}")
            note = note or ("edited before approval" if decision == "edit" else None)
            decided_at = review.settle(tx, item_id, _STATUS_OF[decision], actor=who, note=note)
            if decided_at is None:
                current = review.get_item(tx, item_id)
                assert current is not None
                if current.status == "pending":  # past its expiry: mark it so, apply nothing
                    review.expire_due(tx, actor=who, item_id=item_id)
                    current = review.get_item(tx, item_id)
                    assert current is not None
                    message = (
                        f"expired at {current.expires_at} without a decision; nothing applied"
                    )
                else:
                    message = f"already decided: {current.status}" + (
                        f" by {current.decided_by}" if current.decided_by else ""
                    )
                return ReviewDecision(
                    item_id=item_id, decision=decision, applied=False,  # type: ignore[arg-type]
                    status=current.status, memory_id=current.memory_id,
                    decided_by=current.decided_by, decided_at=current.decided_at,
                    message=message,
                )
            purged = self._apply_decision(tx, item, decision, text, prepared)
            audit.append_event(
                tx, actor=who, action=f"review.{decision}", namespace=item.namespace,
                memory_id=item.memory_id, detail={"item": item_id, "kind": item.kind},
            )
        if purged:
            self._purge()
        return ReviewDecision(
            item_id=item_id, decision=decision, applied=True,  # type: ignore[arg-type]
            status=_STATUS_OF[decision], memory_id=item.memory_id,  # type: ignore[arg-type]
            decided_by=who, decided_at=v.parse_time(decided_at),
            message=f"{_STATUS_OF[decision]} {item.kind} item {item_id}",
        )

    def _screened_edit(self, text: str | None) -> str:
        if text is None:
            raise InvalidInput("the 'edit' decision needs the new text")
        text = v.validate_content(text, max_bytes=self.settings.max_content_bytes)
        refuse_secrets({"content": text})
        # A review decision is a person's: their edited text is their own rule.
        screening = screen_text(text, mode=self.trust.mode, provenance="person")
        if screening.quarantine:
            first = next(f for f in screening.injection if f.confidence == "high")
            raise InvalidContent(
                f"the edited text still looks like prompt injection ({first.label} at character "
                f"{first.start}); change it, or reject the item"
            )
        return text

    def _prepare_approval(self, item_id: str, namespace: str | None) -> ProposalHandler | None:
        """The approve step of a pending item whose kind does model work, done now,
        before the deciding transaction takes the writer's lock. None when there is
        nothing to prepare, or nothing could be (the transaction then decides and says
        why: not found, already decided, expired, a source changed)."""
        with self.db.read() as conn:
            item = review.get_item(conn, item_id)
        if (item is None or item.status != "pending"
                or (namespace is not None and item.namespace != namespace)):
            return None
        prepare = self.ctx.proposals.preparer(item.kind)
        if prepare is None:
            return None
        try:
            return prepare(item, self.ctx)
        except NotFound:
            return None

    def _apply_decision(
        self, tx: Connection, item: ReviewItem, decision: str, text: str | None,
        prepared: ProposalHandler | None = None,
    ) -> bool:
        """Carry out a decision in its transaction; True if a memory was deleted.
        ``prepared`` replaces the kind's approve step (it re-checks what it prepared)."""
        if item.kind != "quarantine":
            handlers = self.ctx.proposals.handlers(item.kind)
            if handlers is not None:
                approve, reject = handlers
                step = reject if decision == "reject" else (prepared or approve)
                step(tx, item, self.ctx)
            return False
        rowid = self.store.rowid_of(tx, item.memory_id or "", item.namespace)
        if rowid is None:
            raise NotFound(f"the memory of review item {item.id} no longer exists")
        if decision == "reject":
            self._forget_rows(tx, [rowid], reason=f"review item {item.id} rejected")
            return True
        fields: dict[str, Any] = {"status": "active"}
        if decision == "edit":
            assert text is not None
            fields["content"] = text
        self.store.update_fields(tx, rowid, fields)
        if decision == "edit":
            record = self.store.get_by_rowid(tx, rowid)
            assert record is not None
            self.trust.record_update(
                tx, rowid, record, ["content"], screen_text(text or "", mode=self.trust.mode)
            )
        return False

    # -- audit -------------------------------------------------------------------------

    def audit_verify(self) -> AuditReport:
        """Check the whole hash chain, its anchor outside the file, and every memory's text
        against its last audited hash; names the first problem found."""
        anchor = self.ctx.anchor
        with self.db.read() as conn:
            return audit.verify(conn, anchor.read(), anchor_expected=anchor.expected(),
                                fields=self.db.dialect == "sqlite")

    def audit_cross_namespace_read(self, namespace: str | None, *, what: str,
                                   home: str) -> None:
        """An event saying who read outside their own namespace, where and through what."""
        if namespace is not None:
            namespace = v.validate_namespace(namespace)
        home = v.validate_namespace(home)
        if not isinstance(what, str) or not what or len(what) > 100:
            raise InvalidInput("what must be a short non-empty string (a tool or command)")
        with self.db.write() as tx:
            audit.append_event(tx, actor=self.actor, action="read.cross_namespace",
                               namespace=namespace,
                               detail={"via": what, "home": home,
                                       "scope": "one" if namespace else "several"})

    def audit_history(self, memory_id: str) -> list[AuditEvent]:
        """Every audit event about one memory, oldest first (hashes, never content)."""
        if not isinstance(memory_id, str) or not memory_id:
            raise InvalidInput("memory_id must be a non-empty string")
        return audit.history(self.db.conn(), memory_id)

    # -- forgetting by filter ----------------------------------------------------------

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
        """Forget every memory with ``tag`` and/or matching all words of ``query``.

        ``dry_run`` lists the ids that would go and changes nothing; ``only_id`` narrows
        the choice to one memory (a dry run of :meth:`forget`).
        """
        namespace = v.validate_namespace(namespace)
        if tag is None and query is None and only_id is None:
            raise InvalidInput("give a tag or a query to forget by (or forget one id)")
        if tag is not None:
            tag = (v.validate_tags([tag]) or [""])[0]
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInput("limit must be a positive whole number")
        with self.db.read() as conn:
            chosen = forget.select_for_forget(
                conn, self.store, namespace, tag=tag, query=query, limit=limit, only_id=only_id
            )
        report = ForgetReport(dry_run=dry_run, namespace=namespace, ids=[i for _, i in chosen])
        if dry_run or not chosen:
            return report
        reason = "id" if only_id else f"tag {tag!r}" if query is None else "query"
        with self.db.write() as tx:
            also = self._forget_rows(tx, [rowid for rowid, _ in chosen], reason=reason)
        purged = self._purge()
        return report.model_copy(
            update={"forgotten": len(chosen), "derived": also, "purged": purged})

