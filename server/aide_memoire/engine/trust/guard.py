"""``Trust``: the hooks the write, update, forget, import and export paths call.

Screening happens before the write transaction (it is CPU work and must not hold the
lock); recording (findings, review item, size statistics, audit event) happens inside
it, so a memory and its trail are committed together or not at all.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from ..core.errors import SecretRefused
from ..core.models import MemoryRecord
from ..storage.protocol import Connection, Database
from ..storage.repositories import MemoryRows
from ..storage.store import NewRow, content_hash
from ..storage.trust import Findings, SizeStats
from . import audit, review
from .findings import Finding
from .injection import size_anomaly
from .pii import mask_pii, mask_value
from .provenance import provenance_of
from .redact import redact_record
from .screen import Screening, ScreenMode, refuse_record_secrets, screen_record

__all__ = ["DEFAULT_ACTOR", "Trust"]

DEFAULT_ACTOR = "python"
_actor: ContextVar[str | None] = ContextVar("aide_memoire_actor", default=None)


class Trust:
    """Screen, record and audit; one per ``Memory``."""

    def __init__(self, db: Database, store: MemoryRows, *, mode: ScreenMode) -> None:
        self.db = db
        self.store = store
        self.mode: ScreenMode = mode
        self.default_actor = DEFAULT_ACTOR

    # -- who ---------------------------------------------------------------------------

    @property
    def actor(self) -> str:
        return _actor.get() or self.default_actor

    @contextlib.contextmanager
    def acting_as(self, actor: str) -> Iterator[None]:
        """Attribute the calls made inside the block (this thread or task) to ``actor``."""
        token = _actor.set(actor)
        try:
            yield
        finally:
            _actor.reset(token)

    # -- screening (before the transaction) --------------------------------------------

    def screen_rows(self, rows: Sequence[NewRow], *, imported: bool = False) -> list[Screening]:
        """Refuse any secret in the batch; screen each row by its provenance (who its
        words come from), marking quarantined ones."""
        for row in rows:
            refuse_record_secrets(row)
        stats = self._size_stats({row.namespace for row in rows})
        out: list[Screening] = []
        for row in rows:
            count, mean, sd = stats.get(row.namespace, (0, 0.0, 0.0))
            screening = screen_record(
                row, mode=self.mode, extra=size_anomaly(len(row.content), count, mean, sd),
                provenance=provenance_of(row, actor=self.actor, imported=imported),
            )
            if screening.quarantine:
                row.status = "quarantined"
            out.append(screening)
        return out

    def screen_update(self, fields: Mapping[str, Any]) -> Screening | None:
        """Refuse secrets among changed fields; screen the changed text fields (None if
        no screened field changed)."""
        refuse_record_secrets(fields)
        screened = ("content", "tags", "source", "metadata")
        if not any(fields.get(name) is not None for name in screened):
            return None
        return screen_record({k: fields.get(k) for k in screened}, mode=self.mode,
                             provenance=provenance_of(fields, actor=self.actor))

    def screen_import(
        self, record: MemoryRecord, line: int, *, redact: bool = False
    ) -> tuple[MemoryRecord, dict[str, list[str]]]:
        """Refuse (or, with ``redact``, redact span by span) an imported memory's secrets
        in any field; hold it if any field looks like injection, whatever status the file
        gave it (an archived row must not skip the screen and be promoted later).
        Returns the record to store and, per field, the kinds of secret redacted."""
        report: dict[str, list[str]] = {}
        if redact:
            updates, report = redact_record(record)
            if updates:
                record = record.model_copy(update=updates)
        try:
            refuse_record_secrets(record)
        except SecretRefused as exc:
            raise SecretRefused(
                f"import line {line}: {exc}", kind=exc.kind, label=exc.label, field=exc.field,
                offset=exc.offset,
            ) from None
        if record.status != "quarantined" and screen_record(
            record, mode=self.mode, provenance="import"
        ).quarantine:
            record = record.model_copy(update={"status": "quarantined"})
        return record, report

    def _size_stats(self, namespaces: set[str]) -> dict[str, tuple[int, float, float]]:
        conn = self.db.conn()
        out: dict[str, tuple[int, float, float]] = {}
        for namespace in namespaces:
            found = SizeStats.get(conn, namespace)
            if found:
                count, total, squares = found
                mean = total / count
                out[namespace] = (count, mean, math.sqrt(max(squares / count - mean * mean, 0.0)))
        return out

    # -- recording (inside the transaction) --------------------------------------------

    def record_write(
        self,
        tx: Connection,
        memory_id: str,
        row: NewRow,
        screening: Screening,
        *,
        action: str = "store",
    ) -> None:
        """Findings, size statistics, review item (if held) and the audit event of a new row."""
        self._save_findings(tx, memory_id, screening.flags)
        log_length = math.log(max(len(row.content), 1))
        SizeStats.add(tx, row.namespace, log_length)
        detail: dict[str, Any] = {"kind": row.kind, "status": row.status,
                                  "provenance": screening.provenance}
        if screening.flags:
            detail["flags"] = sorted({f"{f.category}:{f.rule}" for f in screening.flags})
        if row.status == "quarantined":
            detail["review_item"] = self._hold(tx, row.namespace, memory_id, screening)
        audit.append_event(
            tx, actor=self.actor, action=action, namespace=row.namespace, memory_id=memory_id,
            content_hash=content_hash(row.content), detail=detail,
        )

    def record_import(self, tx: Connection, record: MemoryRecord) -> None:
        screening = screen_record(record, mode=self.mode, provenance="import")
        row = NewRow(namespace=record.namespace, kind=record.kind, content=record.content,
                     status=record.status)
        self.record_write(tx, record.id, row, screening, action="import")

    def record_update(
        self,
        tx: Connection,
        rowid: int,
        record: MemoryRecord,
        changed: Sequence[str],
        screening: Screening | None,
    ) -> MemoryRecord:
        """Refresh findings, hold the memory if its new text is suspect, audit the change."""
        detail: dict[str, Any] = {"fields": sorted(changed)}
        if screening is not None:
            # Only the changed fields were screened: replace their findings, keep the rest.
            for name in sorted(set(changed) & {"content", "tags", "source", "metadata"}):
                Findings.drop_field(tx, record.id, name)
            self._save_findings(tx, record.id, screening.flags)
            if screening.quarantine and record.status == "active":
                self.store.update_fields(tx, rowid, {"status": "quarantined"})
                detail["review_item"] = self._hold(tx, record.namespace, record.id, screening)
                record = record.model_copy(update={"status": "quarantined"})
        audit.append_event(
            tx, actor=self.actor, action="update", namespace=record.namespace,
            memory_id=record.id, content_hash=content_hash(record.content), detail=detail,
        )
        return record

    def record_forget(self, tx: Connection, rowid: int, *, reason: str) -> None:
        """Audit (by hash) and close the review items of a memory about to be deleted."""
        found = self.store.identity(tx, rowid)
        if found is None:
            return
        memory_id, namespace, digest = found
        review.close_for_memory(
            tx, memory_id, actor=self.actor, note=f"memory forgotten ({reason})"
        )
        audit.append_event(
            tx, actor=self.actor, action="forget", namespace=namespace, memory_id=memory_id,
            content_hash=digest, detail={"reason": reason},
        )

    def record_export(
        self,
        tx: Connection,
        namespace: str | None,
        count: int,
        reveal_pii: bool,
    ) -> None:
        audit.append_event(
            tx, actor=self.actor, action="export", namespace=namespace,
            detail={"count": count, "reveal_pii": reveal_pii},
        )

    def _save_findings(self, tx: Connection, memory_id: str, findings: Sequence[Finding]) -> None:
        Findings.add(tx, memory_id, [(f.category, f.rule, f.start, f.end, f.confidence, f.field)
                                     for f in findings])

    def _hold(
        self,
        tx: Connection,
        namespace: str,
        memory_id: str,
        screening: Screening,
    ) -> str:
        return review.open_item(
            tx, namespace=namespace, kind="quarantine", memory_id=memory_id,
            evidence={"mode": self.mode, "provenance": screening.provenance,
                      "findings": [f.as_evidence() for f in screening.injection]},
        )

    # -- export ------------------------------------------------------------------------

    @staticmethod
    def masked(record: MemoryRecord) -> MemoryRecord:
        """The record with personal data masked in every field a reader sees: text,
        context, tags, source, speaker and metadata values (keys kept, so it still loads)."""
        update: dict[str, Any] = {"content": mask_pii(record.content)}
        for name in ("context", "source", "speaker"):
            value = getattr(record, name)
            if value:
                update[name] = mask_pii(value)
        if record.tags:
            update["tags"] = [mask_pii(tag) for tag in record.tags]
        if record.metadata:
            update["metadata"] = mask_value(record.metadata)
        return record.model_copy(update=update)
