"""The general supersession path: updates the rules do not read.

After the rules, each new memory looks up older memories of its namespace that share its
index terms (``memory_terms``, a few indexed lookups), compares signatures
(``aspects.py``) and, when both rows have vectors, their cosine (the vectors the write
already computed; nothing is encoded again). The best candidate's confidence decides:

- at or above ``accept``: the older memory names the newer in ``superseded_by`` and stays
  active (recall ranks it just below the newer; ``as_of`` before the change still finds
  it first), with an audit event and a ``memory_updates`` row holding the confidence;
- at or above ``propose``: a ``fact_update`` proposal goes to the review queue with the
  signals as evidence; approving makes the link, rejecting records that it is not one;
- below: nothing.

Which memory is older is decided by valid time (observed time), so a backfilled memory
is placed where it belongs; two memories of the same moment are never ordered here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import clock
from ..storage.portable.updates import add_terms, embeddings_by_rowid, mark_updated_by, update_rows
from ..trust import audit, review
from .aspects import Features, Signature, bounded_signature, pair_features
from .entities import Mention

if TYPE_CHECKING:
    from ..runtime.context import EngineContext
    from ..storage.protocol import Connection
    from ..trust.models import ReviewItem

__all__ = ["UPDATE_KIND", "GeneralUpdates", "UpdateTuning", "approve_update", "reject_update"]

UPDATE_KIND = "fact_update"
_PROPOSAL_DAYS = 30
_CACHE = 20_000


@dataclass(frozen=True)
class UpdateTuning:
    """Weights and thresholds, chosen on the tuning half of the knowledge-update suite
    (tests/facts/knowledge_updates_general.json); see docs/facts.md for the figures."""

    subject: float = 0.30
    aspect: float = 0.20
    differs: float = 0.10
    cue: float = 0.30
    names_old: float = 0.20
    adds: float = 0.30  # taken off when the newer says it adds rather than replaces
    dense_share: float = 0.4  # share of the confidence the cosine takes when present
    dense_floor: float = 0.3  # cosines at or below this count as no evidence
    dense_full: float = 0.8  # and at or above this as full evidence
    aspect_dense: float = 0.5  # a cosine this high counts as "the same aspect"
    accept: float = 0.55
    propose: float = 0.45
    turn_accept: float = 0.75  # conversation turns chat about everything: be stricter
    max_words: int = 14  # longer texts hold several statements: not compared
    per_term: int = 64  # most recent memories read per index term
    candidates: int = 8  # best-sharing candidates scored per new memory


@dataclass(frozen=True)
class Item:
    """A new memory as the path sees it."""

    rowid: int
    id: str
    namespace: str
    kind: str
    at: str
    signature: Signature
    vector: Any
    speaker: str | None
    observed: bool
    content: str


@dataclass(frozen=True)
class _Row:
    rowid: int
    id: str
    kind: str
    status: str
    at: str
    observed: bool  # has an observed (event) time, not only its write time
    superseded_by: str | None
    content: str
    speaker: str | None


def comparable(f: Features) -> bool:
    """The gates, which read no cosine: a pair failing them is never an update."""
    if f.differs == 0.0 and f.cue == 0.0:
        return False  # the same value, said again
    if f.rivals or f.series or f.extends or f.continues:
        # two subjects described alike, two items of a series, one more item, or the
        # old value said to hold on
        return False
    return not (f.subject == 0.0 and f.aspect < 0.5)  # else: not about the same thing


def confidence(f: Features, t: UpdateTuning) -> float:
    if not comparable(f):
        return 0.0
    lexical = (t.subject * f.subject + t.aspect * f.aspect + t.differs * f.differs
               + t.cue * f.cue + t.names_old * f.names_old - t.adds * f.adds)
    if f.dense is None:
        score = lexical
    else:
        dense = min(1.0, max(0.0, (f.dense - t.dense_floor) / (t.dense_full - t.dense_floor)))
        score = (1.0 - t.dense_share) * lexical + t.dense_share * dense
    same_aspect = f.aspect > 0 or f.names_old > 0 or (
        f.dense is not None and f.dense >= t.aspect_dense
    ) or (f.differs >= 1.0 and f.cue > 0 and f.subject >= 0.75)  # one name swapped for
    # another, as a change, where both name their topic (not a name said in passing)
    # The same subject saying something about another aspect ("Clara is allergic to
    # peanuts" / "Clara started at Klarna") is not an update: at most a question.
    return score if same_aspect else min(score, t.propose)


class GeneralUpdates:
    """Run inside the facts write hook, after the rules."""

    def __init__(
        self, *, tuning: UpdateTuning, actor: Callable[[], str],
        vector_table: Callable[[Any], str | None],
    ) -> None:
        self.tuning = tuning
        self.actor = actor
        self.vector_table = vector_table
        # Older memories come back as candidates again and again: keep their signatures
        # (keyed by rowid and text, so an edit is read afresh).
        self._signatures: dict[tuple[int, str], Signature | None] = {}

    def item(self, rowid: int, memory_id: str, namespace: str, kind: str, at: str | None, text: str,
             mentions: list[Mention], speaker: str | None, vector: Any) -> Item | None:
        """The new memory as compared, or None when it is too long to state one thing."""
        if text.count(" ") >= 3 * self.tuning.max_words:
            return None  # cheap pre-check: the signature would be too large anyway
        found = bounded_signature(text, mentions, speaker=speaker, limit=self.tuning.max_words)
        if found is None:
            return None
        return Item(rowid, memory_id, namespace, kind, at or clock.format_time(clock.now()),
                    found, vector, speaker, bool(at), text)

    def __call__(self, tx: Connection, found: list[Item | None]) -> None:
        items = [i for i in found if i is not None and i.signature.size() <= self.tuning.max_words]
        if not items:
            return
        add_terms(tx, [(i.namespace, term, i.rowid) for i in items
                       for term in i.signature.terms()])
        if len(self._signatures) + len(items) >= _CACHE:
            self._signatures.clear()
        for i in items:  # later memories find these as candidates: read each text once
            self._signatures[(i.rowid, i.content)] = i.signature
        table = self.vector_table(tx) if any(i.vector is not None for i in items) else None
        batch = {i.rowid for i in items}
        for item in items:
            self._one(tx, item, table, batch)

    def _one(self, tx: Connection, item: Item, table: str | None, batch: set[int]) -> None:
        scored = [(confidence(f, self.tuning), row, newer, f)
                  for row, newer, f in self.pairs(tx, item, table, batch)]
        if not scored:
            return
        score, row, newer_is_item, features = max(scored, key=lambda s: s[0])
        old_id, new_id = (row.id, item.id) if newer_is_item else (item.id, row.id)
        turn = "turn" in (row.kind, item.kind)
        accept = self.tuning.turn_accept if turn else self.tuning.accept
        if score >= accept:
            link(tx, item.namespace, old_id, new_id, score, features, actor=self.actor())
        elif score >= self.tuning.propose and not turn:
            # Chat mentions everything in passing: proposals from turns would bury the
            # queue, so an unsure turn pair is left alone.
            _propose(tx, item.namespace, old_id, new_id, score, features)

    def pairs(self, tx: Connection, item: Item, table: str | None,
              batch: set[int]) -> list[tuple[_Row, bool, Features]]:
        """Older or newer memories that pass the gates, with how each relates to ``item``
        (the row, whether ``item`` is the newer, the features)."""
        if item.kind == "turn" and not item.signature.cue:
            # Without a change word a turn cannot reach the turn threshold (it is indexed
            # above, so later turns still find it).
            return []
        terms = item.signature.terms()
        if not terms:
            return []
        # One statement: the most recent memories of each term, each limited on its own.
        sql = " UNION ALL ".join(
            f"SELECT * FROM (SELECT memory_rowid FROM memory_terms WHERE namespace = ? AND "
            f"term = ? AND memory_rowid != ? ORDER BY memory_rowid DESC LIMIT ?) AS t{n}"
            for n in range(len(terms))  # named: PostgreSQL before 16 requires it
        )
        params: list[Any] = []
        for term in terms:
            params += [item.namespace, term, item.rowid, self.tuning.per_term]
        shared: dict[int, int] = {}
        for (rowid,) in tx.execute(sql, params):
            shared[int(rowid)] = shared.get(int(rowid), 0) + 1
        if not shared:
            return []
        best = sorted(shared, key=lambda r: (-shared[r], -r))[: self.tuning.candidates]
        rows = _rows(tx, best)
        if any(r.superseded_by == item.id for r in rows):
            return []  # the rules already closed one: they are exact, so they win
        unread = [r.rowid for r in rows if (r.rowid, r.content) not in self._signatures]
        names = _names(tx, unread) if unread else {}
        pairs: list[tuple[_Row, bool, Features]] = []
        for row in rows:
            if row.status != "active" or row.at == item.at:
                continue
            if row.rowid in batch and not (row.observed or item.observed):
                continue  # written together with no event times: the same moment
            other = self._signature(row, names)
            if other is None:
                continue
            if "turn" in (row.kind, item.kind) and row.speaker != item.speaker:
                continue  # a turn speaks for its speaker: another's turn is not an update
            newer_is_item = item.at > row.at
            old_sig, new_sig = (other, item.signature) if newer_is_item else (
                item.signature, other)
            # The gates do not read the cosine: only pairs that pass them cost a read.
            features = pair_features(old_sig, new_sig, None)
            if comparable(features):
                pairs.append((row, newer_is_item, features))
        wanted = [row.rowid for row, *_ in pairs]
        vectors = _vectors(tx, table, wanted) if table and wanted else {}
        return [(row, newer, replace(f, dense=_cosine(item.vector, vectors.get(row.rowid))))
                for row, newer, f in pairs]

    def _signature(self, row: _Row, names: dict[int, list[Mention]]) -> Signature | None:
        """The row's signature, or None when it is too long to compare (cached either way)."""
        key = (row.rowid, row.content)
        if key in self._signatures:
            return self._signatures[key]
        if len(self._signatures) >= _CACHE:
            self._signatures.clear()
        found = bounded_signature(row.content, names.get(row.rowid, []), speaker=row.speaker,
                                  limit=self.tuning.max_words)
        self._signatures[key] = found
        return found


def link(tx: Connection, namespace: str, old_id: str, new_id: str, score: float,
         features: Features | None, *, actor: str, rule: str = "general") -> bool:
    """Name ``new_id`` as what updated ``old_id`` (if nothing names one yet)."""
    if not mark_updated_by(tx, namespace, old_id, new_id, clock.format_time(clock.now())):
        return False
    _record(tx, namespace, old_id, new_id, score, features, "applied")
    audit.append_event(
        tx, actor=actor, action="supersede", namespace=namespace, memory_id=old_id,
        detail={"by": new_id, "rule": rule, "confidence": round(score, 3)},
    )
    return True


def _propose(tx: Connection, namespace: str, old_id: str, new_id: str, score: float,
             features: Features) -> None:
    seen = tx.execute(
        "SELECT 1 FROM memory_updates WHERE namespace = ? AND old_id = ? AND new_id = ?",
        (namespace, old_id, new_id),
    ).fetchone()
    if seen is not None:
        return
    _record(tx, namespace, old_id, new_id, score, features, "proposed")
    review.open_item(
        tx, namespace=namespace, kind=UPDATE_KIND, memory_id=old_id,
        evidence={
            "old": old_id, "new": new_id, "confidence": round(score, 3),
            "signals": _signals(features),
            "why": "the newer memory looks like an update of the older one (same subject "
            "and aspect, a different value) but not surely. Approve to rank the older "
            "below it for current questions; reject to keep both as current.",
        },
        expires_at=clock.now() + timedelta(days=_PROPOSAL_DAYS),
    )


def _record(tx: Connection, namespace: str, old_id: str, new_id: str, score: float,
            features: Features | None, state: str) -> None:
    tx.execute(
        "INSERT INTO memory_updates (namespace, old_id, new_id, confidence, state, signals, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, old_id, new_id) "
        "DO UPDATE SET state = excluded.state",
        (namespace, old_id, new_id, score, state,
         json.dumps(_signals(features) if features else {}, sort_keys=True),
         clock.format_time(clock.now())),
    )


def _signals(features: Features) -> dict[str, float | None]:
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in asdict(features).items()}


def approve_update(tx: Connection, item: ReviewItem, ctx: EngineContext) -> None:
    """Approving a proposed update makes the link."""
    evidence = item.evidence
    link(tx, item.namespace, str(evidence.get("old")), str(evidence.get("new")),
         float(evidence.get("confidence", 0.0)), None, actor=ctx.actor)


def reject_update(tx: Connection, item: ReviewItem, ctx: EngineContext) -> None:
    """Rejecting records that the pair is not an update, so it is not proposed again."""
    tx.execute(
        "UPDATE memory_updates SET state = 'rejected' WHERE namespace = ? AND old_id = ? "
        "AND new_id = ?",
        (item.namespace, str(item.evidence.get("old")), str(item.evidence.get("new"))),
    )


def _rows(tx: Connection, rowids: list[int]) -> list[_Row]:
    return [
        _Row(int(r), str(i), str(k), str(s), str(o or c), o is not None, b, str(t), sp)
        for r, i, k, s, o, c, b, t, sp in update_rows(tx, rowids)
    ]


def _names(tx: Connection, rowids: list[int]) -> dict[int, list[Mention]]:
    marks = ",".join("?" * len(rowids))
    out: dict[int, list[Mention]] = {}
    for rowid, name, display, kind in tx.execute(
        f"SELECT me.memory_rowid, e.name, e.display, e.type FROM memory_entities me "
        f"JOIN entities e ON e.id = me.entity_id WHERE me.memory_rowid IN ({marks})",
        rowids,
    ):
        out.setdefault(int(rowid), []).append(Mention(str(name), str(display), str(kind)))
    return out


def _vectors(tx: Connection, table: str, rowids: list[int]) -> dict[int, Any]:
    return {rowid: np.frombuffer(blob, dtype=np.float32)
            for rowid, blob in embeddings_by_rowid(tx, table, rowids).items()}


def _cosine(a: Any, b: Any) -> float | None:
    if a is None or b is None:
        return None
    x = np.asarray(a, dtype=np.float32)
    y = np.asarray(b, dtype=np.float32)
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norm if norm else None
