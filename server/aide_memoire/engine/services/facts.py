"""The facts service: facts of a subject, a memory's facts, the entity graph.

Starting it registers the extraction write hook, the supersession and bridge recall
adjusters and the conflict and update proposal kinds.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core import clock
from ..core import validate as v
from ..core.errors import InvalidInput, NotFound
from ..core.models import Stage
from ..facts import graph
from ..facts.adjust import BridgeTuning, bridges, supersession
from ..facts.entities import normalise
from ..facts.models import Fact, MemoryDetail, RelatedResult
from ..facts.supersede import CONFLICT_KIND, rebuild_slot, settle_memories
from ..facts.turns import TurnLinks, TurnTuning
from ..facts.updates import (
    UPDATE_KIND,
    GeneralUpdates,
    UpdateTuning,
    approve_update,
    link,
    reject_update,
)
from ..facts.write import FactWriter
from ..storage.store import RowFilter

if TYPE_CHECKING:
    from ..facts.gliner import GlinerSpans
    from ..runtime.context import EngineContext
    from ..storage.protocol import Connection
    from ..trust.models import ReviewItem
    from .records import RecordsService

__all__ = ["FactsService"]

_FACT_COLUMNS = (
    "f.subject, f.predicate, f.object, f.subject_text, f.object_text, f.memory_id, "
    "f.valid_from, f.valid_to, f.ended_by"
)
_MAX_DEPTH = 3


def _fact(values: tuple[Any, ...], moment: datetime | None) -> Fact:
    subject, predicate, obj, s_text, o_text, memory_id, start, end, by = values
    valid_to = clock.parse_stored(end)
    valid_from = clock.parse_stored(start)
    assert valid_from is not None
    current = valid_to is None if moment is None else (
        valid_from <= moment and (valid_to is None or valid_to > moment)
    )
    return Fact(
        subject=subject, predicate=predicate, object=obj, subject_text=s_text,
        object_text=o_text, memory_id=memory_id, valid_from=valid_from, valid_to=valid_to,
        superseded_by=by, current=current,
    )


class FactsService:
    def __init__(self, ctx: EngineContext, records: RecordsService) -> None:
        self.ctx = ctx
        self.db = ctx.db
        self.settings = ctx.settings
        self.records = records
        self.gliner: GlinerSpans | None = None
        if self.settings.gliner_model:
            from ..facts.gliner import GlinerSpans

            self.gliner = GlinerSpans(self.settings.gliner_model)
        if self.settings.extract_facts:
            spans = self.gliner if self.gliner is not None and self.gliner.available() else None
            general = GeneralUpdates(
                tuning=UpdateTuning(), actor=lambda: ctx.actor, vector_table=self._update_table
            )
            ctx.pipeline.add_hook(
                "facts", FactWriter(ctx.repos.rows, ctx.repos.entities, actor=lambda: ctx.actor,
                                    spans=spans, general=general, turns=TurnLinks(
                                        tuning=TurnTuning(), vector_table=self._update_table,
                                        link=self._link_turns))
            )
        ctx.recaller.add_adjuster("supersession", supersession(ctx.repos.rows))
        if self.settings.entity_bridges:
            ctx.recaller.add_adjuster("entity_bridges", bridges(BridgeTuning(), ctx.repos.rows))
        ctx.proposals.register(CONFLICT_KIND, approve=_keep_newer, reject=_drop_newer)
        ctx.proposals.register(UPDATE_KIND, approve=approve_update, reject=reject_update)

    def _link_turns(self, tx: Connection, namespace: str, old_id: str, new_id: str,
                    score: float) -> bool:
        return link(tx, namespace, old_id, new_id, score, None, actor=self.ctx.actor,
                    rule="turn")

    def _update_table(self, tx: Connection) -> str | None:
        """The vec0 table the rows of this write went to, or None when keyword-only
        (never loads the model: this runs under the write lock)."""
        return self.ctx.vector_table(tx, wait=False)

    def facts_stage(self) -> Stage:
        if not self.settings.extract_facts:
            return Stage(name="extraction", live=False, detail="off (extract_facts is false)")
        if self.gliner is None:
            return Stage(name="extraction", live=True,
                         detail="rules only (no GLiNER model configured)")
        if not self.gliner.available():
            return Stage(name="extraction", live=True,
                         detail=f"rules only: {self.gliner.error}")
        return Stage(name="extraction", live=True,
                     detail=f"rules + GLiNER spans from {self.gliner.path}")

    # -- reading -----------------------------------------------------------------------

    def facts(
        self, subject: str, *, namespace: str = "default", predicate: str | None = None,
        as_of: datetime | str | None = None, include_history: bool = False, limit: int = 100,
    ) -> list[Fact]:
        """Facts about ``subject``: those holding now (or at ``as_of``), or every one with
        ``include_history``; oldest first within each predicate."""
        namespace = v.validate_namespace(namespace)
        if not isinstance(subject, str) or not normalise(subject):
            raise InvalidInput("subject must be a non-empty name, e.g. 'alice' or 'we'")
        key = normalise(subject)
        key = "user" if key in ("i", "me") else key
        moment = v.parse_time(as_of, field="as_of")
        clauses = ["f.namespace = ?", "f.subject = ?"]
        params: list[Any] = [namespace, key]
        if predicate:
            clauses.append("(f.predicate = ? OR f.predicate LIKE ?)")
            params += [predicate, f"{predicate}:%"]
        if moment is not None and not include_history:
            stamp = clock.format_time(moment)
            clauses.append("f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?)")
            params += [stamp, stamp]
        elif not include_history:
            clauses.append("f.valid_to IS NULL")
        rows = self.db.conn().execute(
            f"SELECT {_FACT_COLUMNS} FROM facts f WHERE {' AND '.join(clauses)} "
            "ORDER BY f.predicate, f.valid_from, f.id LIMIT ?",
            [*params, _bounded(limit)],
        ).fetchall()
        return [_fact(tuple(r), moment) for r in rows]

    def memory_facts(self, memory_id: str, *, namespace: str) -> list[Fact]:
        """The facts read from one memory (closed ones too)."""
        namespace = v.validate_namespace(namespace)
        rows = self.db.conn().execute(
            f"SELECT {_FACT_COLUMNS} FROM facts f WHERE f.namespace = ? AND f.memory_id = ? "
            "ORDER BY f.id",
            (namespace, memory_id),
        ).fetchall()
        return [_fact(tuple(r), None) for r in rows]

    def get_detail(self, memory_id: str, *, namespace: str) -> MemoryDetail:
        """A memory with its facts (what ``get`` shows in the CLI and over MCP)."""
        record = self.records.get(memory_id, namespace=namespace)
        return MemoryDetail(
            **record.model_dump(), facts=self.memory_facts(memory_id, namespace=namespace)
        )

    def related(
        self, entity_or_id: str, *, namespace: str = "default", depth: int = 1,
        limit: int = 20, memories: bool = True,
    ) -> RelatedResult:
        """Entities linked to an entity (by name) or to a memory's entities (by id), up to
        ``depth`` edges away, with memories that mention them (unless ``memories`` is
        False: for entities mentioned by tens of thousands of memories, that list costs
        a second or more)."""
        namespace = v.validate_namespace(namespace)
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= _MAX_DEPTH:
            raise InvalidInput(f"depth must be a whole number from 1 to {_MAX_DEPTH}")
        limit = _bounded(limit)
        if not isinstance(entity_or_id, str) or not entity_or_id.strip():
            raise InvalidInput("give an entity name or a memory id")
        conn = self.db.conn()
        start = self._start_entities(conn, namespace, entity_or_id)
        found, walked = graph.related(conn, namespace, list(start), depth=depth, limit=limit)
        if walked:
            with self.db.write() as tx:
                graph.refresh(tx, walked)
        names = {eid: name for eid, name in self._entity_ids(conn, found, namespace).items()}
        where = RowFilter(namespaces=[namespace])
        mentions = graph.memories_of(conn, self.ctx.repos.entities, names, where, limit) \
            if memories else []
        return RelatedResult(
            namespace=namespace, start=sorted(start.values()), entities=found,
            memories=mentions,
        )

    def entity_names(self, prefix: str, *, namespace: str, limit: int = 100) -> list[str]:
        """A namespace's entity names (normalised) starting with ``prefix``, in order: what
        an MCP client offers as completions for an entity argument."""
        namespace = v.validate_namespace(namespace)
        if not isinstance(prefix, str):
            raise InvalidInput("the prefix must be text")
        key = normalise(prefix) if prefix.strip() else ""
        rows = self.ctx.repos.entities.named_like(self.db.conn(), namespace, [key], key)
        return sorted({str(name) for _, name in rows})[:_bounded(limit)]

    def _start_entities(
        self, conn: Connection, namespace: str, entity_or_id: str
    ) -> dict[int, str]:
        rows = self.ctx.repos.entities.entities_of_memory(conn, entity_or_id, namespace)
        if not rows:
            rows = conn.execute(
                "SELECT id, name FROM entities WHERE namespace = ? AND name = ?",
                (namespace, normalise(entity_or_id)),
            ).fetchall()
        if not rows:
            raise NotFound(
                f"no entity or memory {entity_or_id!r} in namespace {namespace!r}; "
                "names are matched case-insensitively, memory ids exactly"
            )
        return {int(i): str(n) for i, n in rows}

    @staticmethod
    def _entity_ids(conn: Connection, found: list[Any], namespace: str) -> dict[int, str]:
        names = [e.name for e in found]
        if not names:
            return {}
        rows = conn.execute(
            f"SELECT id, name FROM entities WHERE namespace = ? AND name IN "
            f"({','.join('?' * len(names))})",
            [namespace, *names],
        )
        return {int(i): str(n) for i, n in rows}


def _bounded(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise InvalidInput(f"limit must be a whole number from 1 to 1000, got {limit!r}")
    return limit


def _keep_newer(tx: Connection, item: ReviewItem, ctx: EngineContext) -> None:
    """Approving a conflict confirms the provisional choice: the newer value stands."""


def _drop_newer(tx: Connection, item: ReviewItem, ctx: EngineContext) -> None:
    """Rejecting drops the newer fact and restores the older value's timeline."""
    kept = item.evidence.get("kept", {})
    row = tx.execute(
        "SELECT subject, predicate FROM facts WHERE id = ?", (kept.get("fact"),)
    ).fetchone()
    if row is None:
        return
    tx.execute("DELETE FROM facts WHERE id = ?", (kept.get("fact"),))
    changed = rebuild_slot(tx, item.namespace, str(row[0]), str(row[1]))
    closed = item.evidence.get("closed", {}).get("memory_id")
    if closed:
        ctx.store.undo_supersession(tx, closed, item.namespace, kept.get("memory_id"))
    settle_memories(tx, ctx.repos.rows, item.namespace, changed, actor=ctx.actor)
