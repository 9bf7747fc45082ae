"""The one write pipeline: every new memory passes here, whoever writes it.

    validate (the caller) -> secrets policy -> screen -> encode and the hooks' model work
    (no lock held) -> one short BEGIN IMMEDIATE transaction: insert -> keyword index ->
    vectors -> audit -> after-write hooks (facts, near duplicates) -> the caller's step

``store``, ``store_many``, conversation turns, imports and consolidation summaries call
:meth:`WritePipeline.write` (or :meth:`prepare` then :meth:`commit` inside a transaction
they already hold); ``update`` calls :meth:`update`. Driver errors become the project's
errors where the transaction opens (``Database.write``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ...logs import get_logger
from ..core import clock
from ..core.compose import dense_text
from ..core.errors import InvalidInput, NotFound
from ..core.models import MemoryRecord
from ..recall.embed import Embedder
from ..storage.repositories import MemoryRows, VectorIndex
from ..storage.store import NewRow, WriteHook, Written, indexed
from ..trust.derived import drop_mentions
from ..trust.guard import Trust
from ..trust.redact import redact_record, redact_secrets
from ..trust.screen import Screening
from .conversation import REPLY_TO_PREVIOUS

__all__ = [
    "SECRETS_POLICIES", "Prepared", "RowRedaction", "SecretsPolicy", "WritePipeline",
    "WriteResult",
]

log = get_logger(__name__)

# "redact" (batches' default): each secret span becomes "[redacted:<kind>]" in whatever
# field it sits and the rest of the item is kept, so one suspected secret (a false alarm
# included) costs one span, never a turn or a batch; the call reports each span.
# "refuse": all or nothing, asked for explicitly: the first secret fails the whole call
# naming it, nothing of the call is stored (a single ``store`` always refuses: its caller
# is there to fix the text).
# "skip" (imports only): a line holding a secret is left out and named in the report.
SecretsPolicy = Literal["refuse", "redact", "skip"]
SECRETS_POLICIES: tuple[SecretsPolicy, ...] = ("refuse", "redact", "skip")
_SPANNED_FIELDS = ("content", "context")  # free text: the report gives offsets there


@dataclass(frozen=True)
class RowRedaction:
    """One secret removed from row ``index`` of a batch (never its value)."""

    index: int
    field: str
    kind: str
    start: int | None = None  # offsets in the original text (content and context only)
    end: int | None = None


@dataclass
class Prepared:
    """A batch screened and encoded, ready to commit: nothing here holds the lock."""

    rows: list[NewRow]
    screenings: list[Screening]
    vectors: Any  # one vector per row, or None when dense recall is not live
    records: list[MemoryRecord | None] = field(default_factory=list)  # imports: as they were
    hook_state: dict[str, Any] = field(default_factory=dict)
    redactions: list[RowRedaction] = field(default_factory=list)


@dataclass(frozen=True)
class WriteResult:
    ids: list[str]
    added: int
    redactions: tuple[RowRedaction, ...] = ()


def check_policy(
    secrets: object, allowed: tuple[SecretsPolicy, ...] = ("refuse", "redact")
) -> SecretsPolicy:
    if secrets not in allowed:
        raise InvalidInput(f"secrets must be one of {list(allowed)}, got {secrets!r}")
    return secrets


def _redact(rows: Sequence[NewRow]) -> list[RowRedaction]:
    """Every field of every row redacted span by span (trust/redact.py, as capture and
    imports do): free text with the spans' offsets, labels, tags and metadata by kind."""
    out: list[RowRedaction] = []
    for index, row in enumerate(rows):
        for name in _SPANNED_FIELDS:
            value = getattr(row, name)
            if isinstance(value, str) and value:
                result = redact_secrets(value)
                if result.findings:
                    setattr(row, name, result.text)
                    out.extend(RowRedaction(index, name, f.kind, f.start, f.end)
                               for f in result.findings)
        updates, kinds = redact_record(row)
        for name, value in updates.items():
            setattr(row, name, value)
            out.extend(RowRedaction(index, name, kind) for kind in kinds[name])
    return out


class WritePipeline:
    """Owns the order of a write; the parts it calls own their SQL."""

    def __init__(
        self,
        *,
        db: Any,
        store: MemoryRows,
        tables: VectorIndex,
        trust: Trust,
        embedder: Embedder,
        dense_live: Callable[[], bool],
        session_changed: Callable[[str], None] = lambda namespace: None,
    ) -> None:
        self.db = db
        self.store = store
        self.tables = tables
        self.trust = trust
        self.embedder = embedder
        self.dense_live = dense_live
        self.session_changed = session_changed
        # (name, hook), run in the writing transaction after new rows and their vectors
        # are in. A hook with ``prepare(rows)`` and ``apply(tx, written, vectors, state)``
        # gets its model work done before the lock (GLiNER); others are plain calls.
        self.after_write: list[tuple[str, WriteHook]] = []

    # -- hooks (registered by the services, in their start order) ----------------------

    def add_hook(self, name: str, hook: WriteHook) -> None:
        """Run ``hook`` after every write, after the hooks added before it."""
        if name in self.hook_names():
            raise ValueError(f"write hook {name!r} is registered already")
        self.after_write.append((name, hook))

    def replace_hook(self, name: str, hook: WriteHook) -> WriteHook:
        """Put ``hook`` in the place of the one named ``name``; returns the one replaced."""
        for index, (known, old) in enumerate(self.after_write):
            if known == name:
                self.after_write[index] = (name, hook)
                return old
        raise KeyError(f"no write hook {name!r}")

    def hook_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.after_write)

    # -- before the lock ---------------------------------------------------------------

    def encode(self, rows: Sequence[NewRow | MemoryRecord]) -> Any:
        """Vectors for the rows, or None when dense recall is not live here."""
        if not rows or not self.dense_live() or not self.embedder.wait():
            return None
        return self.embedder.encode([dense_text(indexed(row)) for row in rows])

    def prepare(
        self,
        rows: list[NewRow],
        *,
        secrets: SecretsPolicy = "refuse",
        records: Sequence[MemoryRecord | None] | None = None,
        given_vectors: Mapping[int, Any] | None = None,
    ) -> Prepared:
        """Apply the secrets policy, screen (refusing or holding), encode, and run the
        hooks' model work. ``given_vectors`` (row index -> vector) skips encoding those."""
        redactions = _redact(rows) if check_policy(secrets) == "redact" else []
        # Refuses secrets, holds suspect rows; an import's rows are screened as imported.
        imported = records is not None and any(r is not None for r in records)
        screenings = self.trust.screen_rows(rows, imported=imported)
        vectors = self._vectors(rows, given_vectors or {})
        state: dict[str, Any] = {}
        for name, hook in self.after_write:
            prepare = getattr(hook, "prepare", None)
            if prepare is not None:
                state[name] = prepare(rows)
        return Prepared(rows, screenings, vectors, list(records or [None] * len(rows)),
                        state, redactions)

    def _vectors(self, rows: list[NewRow], given: Mapping[int, Any]) -> Any:
        if not given:
            return self.encode(rows)
        if not rows or not self.dense_live() or not self.embedder.wait():
            return None
        todo = [i for i in range(len(rows)) if i not in given]
        encoded = self.encode([rows[i] for i in todo]) if todo else []
        out: list[Any] = [None] * len(rows)
        for i, vector in given.items():
            out[i] = vector
        for j, i in enumerate(todo):
            out[i] = encoded[j]
        return out

    # -- inside the transaction --------------------------------------------------------

    def commit(
        self,
        tx: Any,
        prepared: Prepared,
        *,
        action: str = "store",
        then: WriteHook | None = None,
        skip_hooks: Collection[str] = (),
    ) -> WriteResult:
        """Insert, index, store vectors, audit and run the hooks in ``tx``."""
        rows, vectors = prepared.rows, prepared.vectors
        stamp = clock.format_time(clock.now())
        ids: list[str] = []
        pending: list[tuple[int, str, Any]] = []
        written: list[Written] = []
        sessions: dict[tuple[str, str], list[int]] = {}
        previous_id: str | None = None
        for index, row in enumerate(rows):
            record = prepared.records[index]
            if record is not None:
                found = self._insert_record(tx, record, row)
                if found is None:  # already present: imports skip it
                    ids.append(record.id)
                    continue
                rowid, memory_id = found, record.id
            else:
                if row.reply_to == REPLY_TO_PREVIOUS:
                    row.reply_to = previous_id
                existing = self.store.find_exact(
                    tx, row.namespace, row.content, row.kind, row.session_id, row.position
                )
                if existing is not None:
                    ids.append(existing)
                    previous_id = existing
                    continue
                is_turn = row.session_id is not None and row.position is not None
                rowid, memory_id = self.store.insert(tx, row, index=not is_turn)
                if is_turn:
                    sessions.setdefault((row.namespace, str(row.session_id)), []).append(
                        int(row.position)  # type: ignore[arg-type]
                    )
            self.trust.record_write(tx, memory_id, row, prepared.screenings[index],
                                    action=action)
            ids.append(memory_id)
            previous_id = memory_id
            written.append(Written(rowid, memory_id, row, index))
            if vectors is not None and vectors[index] is not None:
                pending.append((rowid, row.namespace, vectors[index]))
        for (namespace, session_id), positions in sessions.items():
            self.store.index_turns(tx, namespace, session_id, positions)
            self.session_changed(namespace)
        if pending and self.embedder.space is not None:
            self.tables.insert(tx, self.embedder.space, pending, stamp)
        if written:
            for name, hook in self.after_write:
                if name in skip_hooks:
                    continue
                if name in prepared.hook_state:
                    hook.apply(tx, written, vectors, prepared.hook_state[name])  # type: ignore[attr-defined]
                else:
                    hook(tx, written, vectors)
        if then is not None:
            then(tx, written, vectors)
        return WriteResult(ids, len(written), tuple(prepared.redactions))

    def _insert_record(self, tx: Any, record: MemoryRecord, row: NewRow) -> int | None:
        """An imported record as it was, with what screening changed (status, redactions)."""
        update = {"status": row.status, "content": row.content, "context": row.context}
        if not self.store.insert_record(tx, record.model_copy(update=update)):
            return None
        return self.store.rowid_of(tx, record.id, record.namespace)

    # -- the whole write ---------------------------------------------------------------

    def write(
        self,
        rows: list[NewRow],
        *,
        secrets: SecretsPolicy = "refuse",
        action: str = "store",
        then: WriteHook | None = None,
        records: Sequence[MemoryRecord | None] | None = None,
        given_vectors: Mapping[int, Any] | None = None,
        skip_hooks: Collection[str] = (),
    ) -> WriteResult:
        prepared = self.prepare(rows, secrets=secrets, records=records,
                                given_vectors=given_vectors)
        with self.db.write() as tx:
            result = self.commit(tx, prepared, action=action, then=then, skip_hooks=skip_hooks)
        log.debug("stored", count=len(rows), added=result.added)
        return result

    def update(self, memory_id: str, namespace: str, fields: dict[str, Any]) -> MemoryRecord:
        """Change validated ``fields`` of a memory; a new text is encoded before the lock
        (and again inside only if the row changed in between)."""
        screening = self.trust.screen_update(fields)
        vector: Any = None
        planned = ""
        if "content" in fields:
            current = self.store.get(self.db.conn(), memory_id, namespace)
            if current is not None:
                after = current.model_copy(update=fields)
                planned = dense_text(indexed(after))
                encoded = self.encode([after])
                vector = None if encoded is None else encoded[0]
        with self.db.write() as tx:
            rowid = self.store.rowid_of(tx, memory_id, namespace)
            if rowid is None:
                raise NotFound(f"no memory {memory_id!r} in namespace {namespace!r}")
            self.store.update_fields(tx, rowid, fields)
            record = self.store.get_by_rowid(tx, rowid)
            assert record is not None
            record = self.trust.record_update(tx, rowid, record, list(fields), screening)
            if "content" in fields:
                self._rederive(tx, rowid, record)
            if "content" in fields and self.embedder.space is not None:
                if dense_text(indexed(record)) != planned:
                    encoded = self.encode([record])  # changed since: rare, pay it here
                    vector = None if encoded is None else encoded[0]
                if vector is not None:
                    self.tables.insert(tx, self.embedder.space,
                                       [(rowid, record.namespace, vector)],
                                       clock.format_time(clock.now()))
        return record

    def _rederive(self, tx: Any, rowid: int, record: MemoryRecord) -> None:
        """New text: the old text's entity mentions go (a trigger drops its facts), and
        facts and entities are read from the new text, as for a new write."""
        drop_mentions(tx, rowid)
        row = NewRow(namespace=record.namespace, kind=record.kind, content=record.content,
                     status=record.status, speaker=record.speaker)
        for name, hook in self.after_write:
            if name == "facts":
                hook(tx, [Written(rowid, record.id, row, 0)], None)
