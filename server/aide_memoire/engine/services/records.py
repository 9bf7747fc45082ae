"""The records service: storing, changing, reading and listing memories.

Every write goes through the context's write pipeline (screen, insert, index, audit,
after-write hooks in one transaction); this service validates what callers give.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Unpack

from ...logs import get_logger
from ..core import clock
from ..core import fields as core_fields
from ..core import validate as v
from ..core.errors import InvalidInput, NotFound
from ..core.models import FieldFilters, MemoryRecord, StoreFields, UpdateFields
from ..facts.supersede import supersede_memory
from ..runtime.conversation import Turn, plan_turns
from ..runtime.pipeline import SecretsPolicy, WriteResult, check_policy
from ..storage.store import NewRow, WriteHook, Written
from .query import check_limit, row_filter

if TYPE_CHECKING:
    from ..runtime.context import EngineContext
    from ..storage.protocol import Connection

__all__ = ["RecordsService"]

log = get_logger(__name__)


def _log_redactions(result: WriteResult) -> None:
    if result.redactions:
        log.info("secrets_redacted", count=len(result.redactions),
                 kinds=sorted({r.kind for r in result.redactions}))


class RecordsService:
    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx
        self.db = ctx.db
        self._rows = ctx.store  # not 'store': that is the method
        self.settings = ctx.settings
        self.pipeline = ctx.pipeline

    @property
    def actor(self) -> str:
        return self.ctx.actor

    def _new_row(self, namespace: str, given: Mapping[str, Any], *, what: str) -> NewRow:
        """A new row from what a caller gave: each declared field checked (core/fields.py)."""
        values = v.validate_fields(given, max_bytes=self.settings.max_content_bytes, what=what)
        if "content" not in values:
            raise InvalidInput(f"{what} needs 'content', the memory's text")
        return NewRow(namespace=v.validate_namespace(namespace), **values)

    def store(
        self,
        content: str,
        *,
        namespace: str = "default",
        supersedes: str | None = None,
        **fields: Unpack[StoreFields],
    ) -> str:
        """Store one memory and return its id; the same text again returns the first id.

        The fields (``kind``, ``tags``, ``importance``, ``metadata``, ``observed_at``,
        ``source`` ...) are those core/fields.py declares settable. ``supersedes`` names a
        memory this one replaces: it is closed (valid until this one's observed time,
        status superseded) in the same transaction.
        """
        row = self._new_row(namespace, {"content": content, **fields}, what="store")
        then = None
        if supersedes is not None:
            if not isinstance(supersedes, str) or not supersedes.strip():
                raise InvalidInput("supersedes must be the id of the memory this one replaces")
            then = self._supersedes_hook(row.namespace, supersedes)
        return self._write_rows([row], then=then)[0]

    def store_many(
        self, items: Iterable[Mapping[str, Any]], *, namespace: str = "default",
        secrets: SecretsPolicy = "redact",
    ) -> list[str]:
        """Store several memories in one transaction (one encoding batch); ids in order.

        Each item takes the keyword arguments of :meth:`store` (``content`` required);
        an item's own ``namespace`` overrides the call's. Each item is handled on its own:
        a suspected secret is redacted span by span (``[redacted:<kind>]``), a suspected
        injection holds that item only; ``secrets="refuse"`` asks for all or nothing.
        :meth:`store_many_report` also says what was redacted.
        """
        return self.store_many_report(items, namespace=namespace, secrets=secrets).ids

    def store_many_report(
        self, items: Iterable[Mapping[str, Any]], *, namespace: str = "default",
        secrets: SecretsPolicy = "redact",
    ) -> WriteResult:
        """:meth:`store_many` with its report: ids, how many were new, secrets removed."""
        check_policy(secrets)
        rows: list[NewRow] = []
        allowed = {"namespace", *(f.name for f in core_fields.FIELDS if f.settable)}
        for number, item in enumerate(items, start=1):
            if not isinstance(item, Mapping) or "content" not in item:
                raise InvalidInput(f"item {number} must be a mapping with 'content'")
            unknown = set(item) - allowed
            if unknown:
                raise InvalidInput(f"item {number} has unknown fields: {sorted(unknown)}")
            given = {k: val for k, val in item.items() if k != "namespace"}
            rows.append(self._new_row(item.get("namespace", namespace), given,
                                      what=f"item {number}"))
        result = self.pipeline.write(rows, secrets=secrets)
        _log_redactions(result)
        return result

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

        A turn is a mapping with ``speaker`` and ``content`` and optional ``role``,
        ``observed_at`` and ``metadata``. Turns continue the session ``session_id`` (a new
        one if not given); ``preceding`` gives earlier turns not stored here, for context.
        Each turn is handled on its own: a suspected secret is replaced span by span by
        ``[redacted:<kind>]`` (the turn and every other turn are kept), a suspected
        injection holds that turn; ``secrets="refuse"`` asks for all or nothing.
        :meth:`store_conversation_report` also says what it removed.
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
            last = self._rows.session_tail(conn, namespace, session, context_turns)
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
        _log_redactions(result)
        return result

    def _write_rows(
        self, rows: list[NewRow], then: WriteHook | None = None, *,
        secrets: SecretsPolicy = "refuse",
    ) -> list[str]:
        return self.pipeline.write(rows, then=then, secrets=secrets).ids

    def update(
        self, memory_id: str, *, namespace: str, **changes: Unpack[UpdateFields]
    ) -> MemoryRecord:
        """Change the given fields of a memory (None leaves one as it is); its indexes
        follow in the same transaction."""
        namespace = v.validate_namespace(namespace)
        given = {name: value for name, value in changes.items() if value is not None}
        if not given:
            raise InvalidInput("nothing to update: give at least one field to change")
        fields = v.validate_fields(given, max_bytes=self.settings.max_content_bytes,
                                   what="update")
        return self.pipeline.update(memory_id, namespace, fields)

    def get(self, memory_id: str, *, namespace: str) -> MemoryRecord:
        namespace = v.validate_namespace(namespace)
        with self.db.read() as conn:  # driver errors leave as ours (db.py's boundary)
            record = self._rows.get(conn, memory_id, namespace)
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
        **equals: Unpack[FieldFilters],
    ) -> list[MemoryRecord]:
        """List memories matching every filter, newest first (no query text).

        ``as_of`` lists what was valid then; ``include_superseded`` adds replaced memories;
        ``equals`` holds the exact matches of the fields declared filterable.
        """
        where = row_filter(namespace, tags, kinds, min_importance, since, until, as_of,
                           include_archived=include_archived,
                           include_superseded=include_superseded, equals=equals)
        with self.db.read() as conn:
            return self._rows.list(conn, where, check_limit(limit))

    def _supersedes_hook(self, namespace: str, old_id: str) -> WriteHook:
        """The step ``store(..., supersedes=old_id)`` runs in the writing transaction."""

        def then(tx: Connection, written: list[Written], vectors: Any) -> None:
            if not written:
                return  # the exact text was already stored: nothing new replaces anything
            new = written[0]
            if new.id == old_id:
                raise InvalidInput("a memory cannot supersede itself")
            if self._rows.rowid_of(tx, old_id, namespace) is None:
                raise NotFound(
                    f"supersedes: no memory {old_id!r} in namespace {namespace!r}"
                )
            at = new.row.observed_at or clock.now()
            supersede_memory(tx, self._rows, namespace, old_id, new.id, at, actor=self.actor)

        return then
