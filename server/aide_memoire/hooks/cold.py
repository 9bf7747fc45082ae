"""The prompt hook's keyword answer with no daemon, and without importing the engine.

A hook process lives for one prompt. Importing the engine (pydantic settings and models,
numpy, the trust screen) costs it several times the whole answer, so while no warm daemon
runs the hook answers from here: the store opened read-only
(engine/storage/sqlite/lookup.py), recall's keyword-only path itself
(engine/recall/keyword_path.py ``KeywordPath.recall``: the words, the FTS5 query and search,
the calibrated scale, fusion and every stage after it, the one function the recaller
runs too), the engine's default adjusters (lifecycle's multiplier, supersession), and
the gate's decision (prompt.py, gate.py) on the result: nothing restated.

Where it can differ from ``Memory.recall`` with no model (docs/hooks.md, "The command
path"): it records no access statistics (it never writes), and it runs no re-ranker and
no entity bridges (both load or read more than a prompt allows; both are off by
default). ``answer`` returns None where it cannot stand in for the engine at all (a
PostgreSQL store, an encrypted or missing file, a setting it cannot read); the caller
then asks the engine.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..engine.core import clock
from ..engine.core.validate import validate_namespace
from ..engine.facts.adjust import supersession
from ..engine.lifecycle.scoring import Weights, utility_adjuster
from ..engine.recall.fusion import RecallTuning
from ..engine.recall.keyword_path import KeywordCaches, KeywordPath, row_fact
from ..engine.recall.stages import RowFact
from ..engine.storage.filter import RowFilter
from ..engine.storage.readonly import KeywordLookup, open_lookup
from .prompt import answer_of, prompt_context

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory

__all__ = ["ColdHit", "ColdRecall", "ColdSettings", "answer"]

DB_FILENAME = "memory.db"  # engine/core/settings.py DB_FILENAME (pinned equal by a test)


@dataclass(frozen=True)
class ColdHit:
    """The part of a recall ``Hit`` the prompt hook reads."""

    id: str
    content: str
    kind: str
    speaker: str | None
    session_id: str | None
    observed_at: datetime | None
    created_at: datetime
    score: float
    scores: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class _Request:
    # What an adjuster reads of recall's RecallRequest (recaller.py is not imported here).
    query: str
    where: RowFilter
    limit: int
    pure: bool = False


class ColdRecall:
    """``Memory.recall`` without the model, over a read-only lookup: a stand-in the
    prompt's decision (``prompt_context``) calls as it calls the engine."""

    def __init__(self, lookup: KeywordLookup, *, weights: Weights | None,
                 tuning: RecallTuning | None = None) -> None:
        self.lookup = lookup
        self.tuning = tuning or RecallTuning()
        # The recaller's order of the FTS columns is the order these weights are declared in.
        self.weights = list(self.tuning.keyword_weights.values())
        # The adjusters the engine registers by default, in its order (lifecycle's, then
        # the facts layer's supersession; services/__init__.py SERVICE_ORDER).
        rows = cast("Any", lookup)
        self.adjusters = [*([utility_adjuster(weights, rows)] if weights else []),
                          supersession(rows)]

    def recall(self, query: str, *, namespace: str, limit: int) -> list[ColdHit]:
        conn, lookup = self.lookup.conn, self.lookup

        def contents(rowids: Iterable[int]) -> Mapping[int, str]:
            return {r: row.content for r, row in lookup.rows(conn, rowids).items()}

        def facts(rowids: Iterable[int]) -> Mapping[int, RowFact]:
            return {r: row_fact(row.namespace, row.session_id,
                                clock.parse_stored(row.observed_at or row.created_at),
                                row.content, row.speaker)
                    for r, row in lookup.rows(conn, rowids).items()}

        where = RowFilter(namespaces=[namespace])
        path = KeywordPath(lookup, self.tuning, self.weights, KeywordCaches())
        found, fused = path.recall(conn, query, where, limit, contents, facts)
        if not fused:
            return []
        request = _Request(query, where, limit)
        for adjust in self.adjusters:
            fused = adjust(conn, cast("Any", request), fused)
        order = sorted(fused, key=lambda r: (-fused[r], r))[:limit]
        rows = lookup.rows(conn, order)
        # A replacement supersession brought in has no keyword score (as in a Hit).
        return [_hit(rows[r], fused[r], found.keyword.get(r)) for r in order if r in rows]


def _hit(row: Any, score: float, bm25: float | None) -> ColdHit:
    created = clock.parse_stored(row.created_at)
    assert created is not None
    return ColdHit(row.id, row.content, row.kind, row.speaker, row.session_id,
                   clock.parse_stored(row.observed_at), created, score,
                   {"bm25": bm25} if bm25 is not None else {})


# The bounds Settings puts on what this path reads (name: low, high, low excluded): a
# value outside them is the engine's to refuse with its message, so the path steps aside.
# tests/hooks/test_cold_path.py pins them to Settings' own schema.
BOUNDS: dict[str, tuple[float, float | None, bool]] = {
    "hook_recall_tokens": (50, 8000, False),
    "hook_recall_floor": (0.0, 1.0, False),
    "lifecycle_weight_importance": (0.0, 1.0, False),
    "lifecycle_weight_feedback": (0.0, 1.0, False),
    "lifecycle_weight_retention": (0.0, 1.0, False),
    "lifecycle_weight_access": (0.0, 1.0, False),
    "lifecycle_half_life_days": (0.0, None, True),
    "lifecycle_access_half_life_days": (0.0, None, True),
}


def _bounded(name: str, value: float) -> float:
    low, high, exclusive = BOUNDS[name]
    if value < low or (exclusive and value == low) or (high is not None and value > high):
        raise ValueError(name)
    return value


@dataclass(frozen=True)
class ColdSettings:
    """The settings the keyword answer reads, from the environment as Settings reads them
    (its defaults; tests/hooks/test_cold_path.py pins them to Settings')."""

    recall_tokens: int = 400
    recall_floor: float = 0.65
    lifecycle_scoring: bool = True
    weights: Weights = field(default_factory=Weights)
    driver: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> ColdSettings | None:
        """None when a value does not read (the engine then says which, as it would)."""
        def get(name: str) -> str | None:
            value = environ.get(f"AIDE_MEMOIRE_{name}")
            return value.strip() if value is not None and value.strip() else None

        try:
            base = cls()
            w = base.weights
            weights = Weights(*(_bounded(f"lifecycle_{n}",
                                         float(get(f"LIFECYCLE_{n.upper()}") or d)) for n, d in (
                ("weight_importance", w.importance), ("weight_feedback", w.feedback),
                ("weight_retention", w.retention), ("weight_access", w.access),
                ("half_life_days", w.half_life_days),
                ("access_half_life_days", w.access_half_life_days))))
            scoring = _boolean(get("LIFECYCLE_SCORING"), base.lifecycle_scoring)
            driver = get("SQLITE_DRIVER")
            if driver not in (None, "sqlean", "pysqlite3", "sqlite3"):
                return None
            tokens = int(get("HOOK_RECALL_TOKENS") or base.recall_tokens)
            floor = float(get("HOOK_RECALL_FLOOR") or base.recall_floor)
            return cls(int(_bounded("hook_recall_tokens", tokens)),
                       _bounded("hook_recall_floor", floor), scoring, weights, driver)
        except ValueError:
            return None


def _boolean(value: str | None, default: bool) -> bool:
    if value is None:
        return default
    if value.lower() in ("0", "false", "no", "off", "f", "n"):
        return False
    if value.lower() in ("1", "true", "yes", "on", "t", "y"):
        return True
    raise ValueError(value)


def answer(home: Path, request: dict[str, Any],
           environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The hook service's answer to a ``prompt`` request (hooks/service.py ``handle``),
    keyword-only, or None where only the engine can answer (see the module)."""
    env = os.environ if environ is None else environ
    settings = ColdSettings.from_env(env)
    if settings is None or env.get("AIDE_MEMOIRE_DATABASE_URL"):
        return None
    prompt, session = request.get("prompt"), request.get("session_id")
    if not isinstance(prompt, str) or not prompt:
        return None
    try:
        namespace = validate_namespace(request.get("namespace"))
    except ValueError:
        return None
    lookup = open_lookup(home / DB_FILENAME, settings.driver)
    if lookup is None:
        return None
    exclude: Sequence[object] = request.get("exclude") or []
    try:
        recall = ColdRecall(lookup, weights=settings.weights
                            if settings.lifecycle_scoring else None)
        injection = prompt_context(
            cast("Memory", recall), namespace, prompt, floor=settings.recall_floor,
            budget_tokens=settings.recall_tokens,
            exclude={str(i) for i in exclude} if isinstance(exclude, list) else set(),
            session_id=session if isinstance(session, str) and session else None)
    except lookup.Error:  # locked past the busy timeout, or damaged: the engine says which
        return None
    finally:
        lookup.close()
    return answer_of(injection)
