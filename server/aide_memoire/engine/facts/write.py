"""The write hook: entities, links, graph edges and facts of new memories, in their
transaction, with batched statements (a few per batch, not per memory)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..core import clock
from ..storage.protocol import Connection
from ..storage.store import NewRow, Written
from .entities import Mention
from .graph import add_edges, add_similar
from .supersede import close_matching, rebuild_slot, settle_memories
from .taxonomy import is_single
from .turns import Turn, TurnLinks
from .updates import GeneralUpdates, Item

if TYPE_CHECKING:
    from ..storage.repositories import EntityGraph, MemoryRows
    from .extract import Extraction

__all__ = ["FactWriter", "SpanFinder"]

# texts -> entity mentions per text (the GLiNER stage, when configured).
SpanFinder = Callable[[Sequence[str]], list[list[Mention]]]


@dataclass
class _Pending:
    written: Written
    extraction: Extraction
    spans: list[Mention]


class FactWriter:
    """Callable as a ``Memory.after_write`` hook."""

    def __init__(
        self, rows: MemoryRows, entities: EntityGraph, *, actor: Callable[[], str],
        spans: SpanFinder | None = None, general: GeneralUpdates | None = None,
        turns: TurnLinks | None = None,
    ) -> None:
        self.rows = rows  # the memories repository: supersession closes memories through it
        self.entities = entities  # the backend's entity graph
        self.actor = actor
        self.spans = spans
        self.general = general
        self.turns = turns

    def prepare(self, rows: Sequence[NewRow]) -> dict[int, list[Mention]]:
        """The model's spans for the batch's active rows, found before the write lock."""
        if self.spans is None:
            return {}
        active = [i for i, row in enumerate(rows) if row.status == "active"]
        found = self.spans([rows[i].content for i in active]) if active else []
        return dict(zip(active, found, strict=True))

    def __call__(self, tx: Connection, written: list[Written], vectors: Any) -> None:
        self.apply(tx, written, vectors, None)

    def apply(
        self, tx: Connection, written: list[Written], vectors: Any,
        state: dict[int, list[Mention]] | None,
    ) -> None:
        rows = [w for w in written if w.row.status == "active"]  # held rows wait for review
        if not rows:
            return
        from .extract import extract  # its rules compile at import: not on a server's start

        if state is not None or self.spans is None:
            found = [(state or {}).get(w.index, []) for w in rows]
        else:  # called without prepare: the model runs here
            found = self.spans([w.row.content for w in rows])
        pending = [
            _Pending(w, extract(w.row.content, speaker=w.row.speaker), spans)
            for w, spans in zip(rows, found, strict=True)
        ]
        ids = _entity_ids(tx, self.entities, pending)
        links: list[tuple[int, int, str]] = []
        per_memory: list[tuple[str, list[int]]] = []
        for item in pending:
            ns = item.written.row.namespace
            rule_keys = {m.key for m in item.extraction.entities}
            mine: list[int] = []
            for mention in [*item.extraction.entities, *item.spans]:
                entity = ids[(ns, mention.key)]
                if entity not in mine:
                    mine.append(entity)
                    source = "rule" if mention.key in rule_keys else "gliner"
                    links.append((item.written.rowid, entity, source))
            per_memory.append((ns, mine))
        if links:
            self.entities.add_mentions(tx, links)
            counts: dict[int, int] = {}
            for _, entity, _ in links:
                counts[entity] = counts.get(entity, 0) + 1
            tx.executemany(
                "UPDATE entities SET mentions = mentions + ? WHERE id = ?",
                [(n, e) for e, n in counts.items()],
            )
        add_edges(tx, per_memory)
        self._facts(tx, pending)
        if self.general is not None:
            self.general(tx, [_item(self.general, p, vectors) for p in pending])
        if self.turns is not None and vectors is not None:
            self.turns(tx, [(t, p.written.row.namespace, vectors[p.written.index])
                            for p in pending if (t := _turn(p)) is not None])

    def _facts(self, tx: Connection, pending: list[_Pending]) -> None:
        stamp = clock.format_time(clock.now())
        inserted: list[tuple[Any, ...]] = []
        for item in pending:
            row = item.written.row
            when = row.observed_at or clock.now()
            for draft in item.extraction.facts:
                start = clock.format_time(when - timedelta(days=draft.shift_days))
                if draft.action == "retract":
                    continue
                inserted.append((
                    row.namespace, item.written.id, draft.subject, draft.subject_text,
                    draft.predicate, draft.object, draft.object_text, start, stamp,
                ))
        if not any(item.extraction.facts for item in pending):
            return
        tx.executemany(
            "INSERT INTO facts (namespace, memory_id, subject, subject_text, predicate, "
            "object, object_text, valid_from, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            inserted,
        )
        fact_ids = self._new_fact_ids(tx, pending)
        touched: dict[str, set[str]] = {}
        slots: set[tuple[str, str, str]] = set()
        for item in pending:
            ns, memory_id = item.written.row.namespace, item.written.id
            when = item.written.row.observed_at or clock.now()
            for draft in item.extraction.facts:
                start = clock.format_time(when - timedelta(days=draft.shift_days))
                fact_id = fact_ids.get((memory_id, draft.subject, draft.predicate, draft.object))
                closed: set[str] = set()
                if draft.action == "retract":
                    closed = close_matching(tx, ns, draft.subject, draft.predicate, draft.object,
                                            at=start, fact_id=None, memory_id=memory_id)
                elif draft.action == "replace":
                    closed = close_matching(
                        tx, ns, draft.subject, draft.predicate, draft.replaces, at=start,
                        fact_id=fact_id, memory_id=memory_id,
                        same_category_as=None if draft.replaces else draft.object,
                    )
                touched.setdefault(ns, set()).update(closed)
                if draft.action != "retract" and is_single(draft.predicate):
                    slots.add((ns, draft.subject, draft.predicate))
        for ns, subject, predicate in sorted(slots):
            touched.setdefault(ns, set()).update(rebuild_slot(tx, ns, subject, predicate))
        actor = self.actor()
        for ns, memory_ids in touched.items():
            settle_memories(tx, self.rows, ns, memory_ids, actor=actor)

    @staticmethod
    def _new_fact_ids(
        tx: Connection,
        pending: list[_Pending],
    ) -> dict[tuple[str, str, str, str], int]:
        memory_ids = [p.written.id for p in pending if p.extraction.facts]
        out: dict[tuple[str, str, str, str], int] = {}
        for start in range(0, len(memory_ids), 500):
            chunk = memory_ids[start : start + 500]
            for fid, memory_id, subject, predicate, obj in tx.execute(
                "SELECT id, memory_id, subject, predicate, object FROM facts WHERE memory_id IN "
                f"({','.join('?' * len(chunk))})",
                chunk,
            ):
                out[(str(memory_id), str(subject), str(predicate), str(obj))] = int(fid)
        return out


def _item(general: GeneralUpdates, pending: _Pending, vectors: Any) -> Item | None:
    w = pending.written
    at = clock.format_time(w.row.observed_at) if w.row.observed_at else None
    return general.item(
        w.rowid, w.id, w.row.namespace, w.row.kind, at, w.row.content,
        [*pending.extraction.entities, *pending.spans], w.row.speaker,
        None if vectors is None else vectors[w.index],
    )


def _turn(pending: _Pending) -> Turn | None:
    """A conversation turn as the turn-link path reads it (None for any other memory)."""
    w = pending.written
    row = w.row
    if row.kind != "turn" or not row.session_id or not row.speaker or not row.observed_at:
        return None
    return Turn(w.rowid, w.id, row.speaker, row.session_id, row.position or 0,
                clock.format_time(row.observed_at), row.content)


def _entity_ids(
    tx: Connection, entities: EntityGraph, pending: list[_Pending]
) -> dict[tuple[str, str], int]:
    """Ids of every mentioned entity, inserting the new ones (three statements a batch)."""
    wanted: dict[tuple[str, str], Mention] = {}
    for item in pending:
        ns = item.written.row.namespace
        for mention in [*item.extraction.entities, *item.spans]:
            wanted.setdefault((ns, mention.key), mention)
    ids = _lookup(tx, list(wanted))
    missing = [key for key in wanted if key not in ids]
    if missing:
        stamp = clock.format_time(clock.now())
        entities.add_entities(tx, [(ns, key, wanted[(ns, key)].text, wanted[(ns, key)].type, stamp)
                          for ns, key in missing])
        ids.update(_lookup(tx, missing))
        add_similar(tx, entities, [(ns, key, ids[(ns, key)]) for ns, key in missing])
    return ids


def _lookup(tx: Connection, keys: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    by_ns: dict[str, list[str]] = {}
    for ns, key in keys:
        by_ns.setdefault(ns, []).append(key)
    out: dict[tuple[str, str], int] = {}
    for ns, names in by_ns.items():
        for start in range(0, len(names), 500):
            chunk = names[start : start + 500]
            for eid, name in tx.execute(
                f"SELECT id, name FROM entities WHERE namespace = ? AND name IN "
                f"({','.join('?' * len(chunk))})",
                [ns, *chunk],
            ):
                out[(ns, str(name))] = int(eid)
    return out
