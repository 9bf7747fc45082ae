"""The maintenance runner: plan (read only), then, with apply, act in small transactions.

Safe band, done by the runner itself: retire exact duplicates (same text, kind and
tags; the oldest stays), archive memories past their ``metadata.expires_at``, mark
overdue proposals expired. Judgement band, staged as proposals with their evidence:
near-duplicate merges, consolidation summaries, demotion to the cold tier.

A dry run only reads. An applied run holds the namespace's lease; each step is its
own transaction that checks its premise again, so a run cut short leaves every step
either done or not started.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from ...logs import get_logger
from ..core import clock
from ..core import validate as v
from ..core.errors import InvalidInput, NotFound
from ..storage.portable.links import PortableLinks
from ..storage.trust import ReviewQueue
from ..trust import audit, review
from . import consolidate as cons
from . import lease, tiers
from .dedup import exact_groups, load_vectors, merge, similar_pairs
from .models import Action, MaintenanceReport
from .scoring import HELPFUL_AS_RECALLS, Weights, estimate, retention

if TYPE_CHECKING:
    from ..runtime.context import EngineContext
    from ..storage.protocol import Connection
    from ..trust.models import ReviewItem

__all__ = ["PROPOSAL_KINDS", "maintain"]

log = get_logger(__name__)

PROPOSAL_KINDS = ("merge", "consolidate", "demote")
WARM_IMPORTANCE = 0.7


def _key(*parts: str) -> str:
    return ":".join(parts[:1]) + ":" + hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def _safe_band(ctx: EngineContext, conn: Connection, namespace: str,
               now: datetime) -> list[Action]:
    actions: list[Action] = []
    for group in exact_groups(conn, namespace, ctx.store):
        if group.same_tags:
            actions.append(Action(
                kind="retire_duplicate", memory_ids=[group.keep, *group.others], state="planned",
                evidence={"reason": "same text, kind and tags", "kind": group.kind,
                          "keep": group.keep, "copies": len(group.others)},
            ))
    for memory_id, expires in ctx.store.metadata_expiries(conn, namespace):
        try:
            moment = v.parse_time(str(expires), field="metadata.expires_at")
        except InvalidInput:
            continue  # not a time: the caller's metadata, not ours to judge
        if moment is not None and moment <= now:
            actions.append(Action(kind="expire", memory_ids=[str(memory_id)], state="planned",
                                  evidence={"expires_at": clock.format_time(moment)}))
    overdue = ReviewQueue.overdue_count(conn, namespace, now=clock.format_time(now))
    if overdue:
        actions.append(Action(kind="expire_proposals", memory_ids=[], state="planned",
                              evidence={"count": overdue}))
    return actions


def _merges(ctx: EngineContext, conn: Connection, namespace: str,
            table: str | None) -> list[Action]:
    settings = ctx.settings
    pairs: dict[tuple[str, str], tuple[float, str]] = {}
    for group in exact_groups(conn, namespace, ctx.store):
        if not group.same_tags:
            for other in group.others:
                pairs[(other, group.keep)] = (1.0, "same text and kind, different tags")
    for source, target, score in PortableLinks.between_active(conn, namespace, "near_duplicate"):
        pairs.setdefault((source, target), (float(score or 0), "linked on write"))
    if table is not None:
        _, ids, kinds, vectors = load_vectors(conn, table, namespace)
        if len(ids) > 1:
            for i, j, score in similar_pairs(vectors, settings.near_duplicate_threshold):
                if kinds[i] == kinds[j] and (ids[i], ids[j]) not in pairs:
                    # rows come oldest first: the newer one merges into the older
                    pairs.setdefault((ids[j], ids[i]), (score, "found by maintenance"))
    actions = []
    for (source, target), (score, found) in sorted(pairs.items()):
        key = _key("merge", source, target)
        actions.append(Action(kind="merge", memory_ids=[target, source], state="planned",
                              evidence={"key": key, "into": target, "similarity": round(score, 4),
                                        "threshold": settings.near_duplicate_threshold,
                                        "found": found}))
    return actions


def _demotions(ctx: EngineContext, conn: Connection, namespace: str,
               now: datetime) -> list[Action]:
    settings = ctx.settings
    weights = Weights.from_settings(settings)
    floor = 2.0 ** (-settings.demote_after_days / settings.lifecycle_half_life_days)
    actions = []
    for memory_id, importance, created, accessed, count, h, u, w in \
            ctx.store.demotion_candidates(conn, namespace):
        created_at = clock.parse_stored(created)
        assert created_at is not None
        last = clock.parse_stored(accessed)
        kept = retention(created_at, last, int(count) + HELPFUL_AS_RECALLS * int(h), weights, now)
        feedback = estimate(int(h), int(u), int(w))
        stale = kept < floor and float(importance) < WARM_IMPORTANCE and feedback <= 0
        if stale or feedback <= -0.5:
            key = _key("demote", str(memory_id), str(int(count)), str(h + u + w))
            actions.append(Action(kind="demote", memory_ids=[str(memory_id)], state="planned",
                                  evidence={"key": key, "retention": round(kept, 4),
                                            "importance": float(importance),
                                            "feedback": round(feedback, 3),
                                            "recalled": int(count),
                                            "reason": "marked wrong" if feedback <= -0.5
                                            else "unused for long"}))
    return actions


def _consolidations(ctx: EngineContext, conn: Connection, namespace: str, table: str,
                    limit: int) -> list[Action]:
    actions = []
    for cluster in cons.find_clusters(ctx.store, conn, table, namespace,
                                      ctx.settings.consolidation_threshold, limit=limit):
        cluster = cons.summarise(ctx.store, conn, cluster, ctx.embedder.encode)
        key = _key("consolidate", *sorted(cluster.ids))
        actions.append(Action(kind="consolidate", memory_ids=cluster.ids, state="planned",
                              evidence={"key": key, **cons.pieces_evidence(cluster)}))
    return actions


def plan(ctx: EngineContext, namespace: str, *,
         auto_only: bool) -> tuple[list[Action], list[str]]:
    """Everything a run would do, read only. Judgement calls already staged are skipped."""
    now = clock.now()
    notes: list[str] = []
    with ctx.db.read() as conn:
        actions = _safe_band(ctx, conn, namespace, now)
        if auto_only:
            return actions, notes
        table = ctx.vector_table(conn)
        if table is None:
            notes.append("near-duplicate scan and consolidation off: no embedding model here")
        judged = _merges(ctx, conn, namespace, table)
        judged += _demotions(ctx, conn, namespace, now)
        if table is not None:
            judged += _consolidations(ctx, conn, namespace, table,
                                      max(1, ctx.settings.maintenance_max_proposals))
        retired = {i for a in actions if a.kind == "retire_duplicate" for i in a.memory_ids[1:]}
        merging = {a.memory_ids[-1] for a in judged if a.kind == "merge"}
        judged = [
            a for a in judged
            if not retired & set(a.memory_ids)
            and not (a.kind == "consolidate" and merging & set(a.memory_ids))
        ]
        budget = ctx.settings.maintenance_max_proposals
        for action in judged:
            # A person said no, or will say: a proposal pending or rejected stays so.
            if ctx.repos.review.has_open_proposal(conn, namespace, action.kind,
                                                  action.evidence["key"]):
                action.state = "skipped"
            elif budget <= 0:
                continue
            else:
                budget -= 1
            actions.append(action)
    return actions, notes


def maintain(ctx: EngineContext, namespace: str, *, apply: bool, auto_only: bool,
             mode: str = "apply",
             step: Callable[[Action], None] | None = None) -> MaintenanceReport:
    started = clock.now()
    actions, notes = plan(ctx, namespace, auto_only=auto_only)
    report = MaintenanceReport(namespace=namespace, dry_run=not apply, auto_only=auto_only,
                               started_at=started, actions=actions, notes=notes)
    if not apply:
        report.finished_at = clock.now()
        return report
    run_id = clock.new_id()
    actor = ctx.actor
    with ctx.db.write() as tx:
        lease.acquire(tx, namespace, run_id)
        tx.execute(
            "INSERT INTO maintenance_runs (id, namespace, mode, status, started_at, actor) "
            "VALUES (?, ?, ?, 'running', ?, ?)",
            (run_id, namespace, mode, clock.format_time(started), actor),
        )
    report.run_id = run_id
    try:
        for action in actions:
            if action.state == "skipped":
                continue
            if step is not None:
                step(action)  # tests interrupt a run here
            with ctx.db.write() as tx:
                _carry_out(ctx, tx, namespace, action, actor)
        report.done = sum(a.state == "done" for a in actions)
        report.proposed = sum(a.state == "proposed" for a in actions)
        report.finished_at = clock.now()
        _finish(ctx, namespace, run_id, "done", report)
    except BaseException:
        _finish(ctx, namespace, run_id, "failed", report)
        raise
    log.info("maintained", namespace=namespace, done=report.done, proposed=report.proposed)
    return report


def _finish(ctx: EngineContext, namespace: str, run_id: str, status: str,
            report: MaintenanceReport) -> None:
    summary = {"done": report.done, "proposed": report.proposed,
               "actions": [a.kind for a in report.actions if a.state in ("done", "proposed")]}
    with ctx.db.write() as tx:
        tx.execute(
            "UPDATE maintenance_runs SET status = ?, finished_at = ?, report = ? WHERE id = ?",
            (status, clock.format_time(clock.now()), json.dumps(summary), run_id),
        )
        lease.release(tx, namespace, run_id)


def _carry_out(ctx: EngineContext, tx: Connection, namespace: str, action: Action,
               actor: str) -> None:
    store = ctx.store
    if action.kind == "retire_duplicate":
        keep, *others = action.memory_ids
        for other in others:
            if tiers.archive(tx, store, other, namespace, actor=actor,
                             reason="exact duplicate", detail={"keep": keep}):
                tiers.add_link(tx, other, keep, "duplicate_of", namespace, 1.0)
        action.state = "done"
    elif action.kind == "expire":
        moment = clock.parse_stored(action.evidence["expires_at"])
        tiers.archive(tx, store, action.memory_ids[0], namespace, actor=actor,
                      reason="expired", valid_to=moment)
        action.state = "done"
    elif action.kind == "expire_proposals":
        review.expire_due(tx, actor=actor)
        action.state = "done"
    else:
        expires = clock.now() + timedelta(days=ctx.settings.proposal_expiry_days)
        subject = action.memory_ids[-1] if action.kind == "merge" else action.memory_ids[0]
        action.proposal_id = review.open_item(
            tx, namespace=namespace, kind=action.kind, memory_id=subject,
            evidence=action.evidence, expires_at=expires,
        )
        audit.append_event(tx, actor=actor, action=f"lifecycle.propose.{action.kind}",
                           namespace=namespace, memory_id=subject,
                           detail={"item": action.proposal_id})
        action.state = "proposed"


def approve_merge(tx: Connection, item: ReviewItem, ctx: EngineContext) -> None:
    into = str(item.evidence.get("into", ""))
    if not merge(tx, ctx.store, str(item.memory_id), into, item.namespace, actor=ctx.actor,
                 score=item.evidence.get("similarity"), reason=f"review item {item.id}"):
        raise NotFound(f"the memories of proposal {item.id} are no longer both active; "
                       "reject it (maintenance proposes again if still warranted)")


def approve_demote(tx: Connection, item: ReviewItem, ctx: EngineContext) -> None:
    tiers.archive(tx, ctx.store, str(item.memory_id), item.namespace, actor=ctx.actor,
                  reason=f"review item {item.id}", closes=False)


def reject_noop(tx: Connection, item: ReviewItem, ctx: EngineContext) -> None:
    """A rejected proposal changes no memory; its key keeps it from being proposed again."""
