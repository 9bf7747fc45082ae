"""The lifecycle service: feedback, maintenance, consolidation, tiers.

Starting it registers the recall adjuster, the near-duplicate write hook, the proposal
kinds (merge, consolidate, demote) and, opt-in, the background runner, which
:meth:`LifecycleService.close` stops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..core import clock
from ..core import validate as v
from ..core.errors import InvalidInput, NotFound
from ..core.models import Stage
from ..lifecycle import consolidate as cons
from ..lifecycle import lease, runner, tiers
from ..lifecycle.background import Background
from ..lifecycle.dedup import NearDuplicates
from ..lifecycle.models import (
    ConsolidationReport,
    FeedbackResult,
    MaintenanceReport,
    MaintenanceStatus,
    NamespaceMaintenance,
    RestoreResult,
    SummaryPlan,
)
from ..lifecycle.scoring import OUTCOME_VALUES, Weights, estimate, utility_adjuster
from ..lifecycle.summaries import (
    approve_consolidate,
    prepare_consolidate,
    prepare_summary,
    write_summary,
)
from ..storage.trust import ReviewQueue
from ..trust import audit, forget

if TYPE_CHECKING:
    from ..runtime.context import EngineContext
    from ..storage.protocol import Connection

__all__ = ["LifecycleService"]


class LifecycleService:
    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx
        self.db = ctx.db
        self.store = ctx.store
        self.trust = ctx.trust
        self.settings = ctx.settings
        self.embedder = ctx.embedder
        self.recaller = ctx.recaller
        self.pipeline = ctx.pipeline
        if self.settings.lifecycle_scoring:
            weights = Weights.from_settings(self.settings)
            self.recaller.add_adjuster("lifecycle", utility_adjuster(weights, ctx.repos.rows))
        self.near_duplicates = NearDuplicates(
            self.store, self.settings, ctx.live_space, lambda: ctx.actor,
            mirror=ctx.mirror, db=self.db,
        )
        self.pipeline.add_hook("near_duplicates", self.near_duplicates)
        ctx.proposals.register("merge", approve=runner.approve_merge, reject=runner.reject_noop)
        ctx.proposals.register("consolidate", approve=approve_consolidate,
                               reject=runner.reject_noop, prepare=prepare_consolidate)
        ctx.proposals.register("demote", approve=runner.approve_demote,
                               reject=runner.reject_noop)
        self.background = Background(ctx) if self.settings.auto_maintenance else None
        if self.background is not None:
            self.background.start()

    @property
    def actor(self) -> str:
        return self.ctx.actor

    def close(self) -> None:
        """Stop the background runner (if any) and wait for a run in progress to end."""
        if self.background is not None:
            self.background.close()

    def vector_table(self, conn: Connection) -> str | None:
        """The vec0 table of the configured model, loading it if need be; None if off."""
        return self.ctx.vector_table(conn)

    # -- feedback ----------------------------------------------------------------------

    def feedback(
        self, memory_id: str, outcome: str, *, namespace: str = "default"
    ) -> FeedbackResult:
        """Record whether a recalled memory helped: 'helpful', 'unhelpful' or 'wrong'.

        Kept as a running estimate per memory that recall blends into its ranking;
        helpful feedback also counts as successful recalls on the forgetting curve.
        """
        namespace = v.validate_namespace(namespace)
        if outcome not in OUTCOME_VALUES:
            raise InvalidInput(f"outcome must be helpful, unhelpful or wrong, not {outcome!r}")
        column = outcome
        stamp = clock.format_time(clock.now())
        with self.db.write() as tx:
            found = self.store.content_hash_of(tx, memory_id, namespace)
            if found is None:
                raise NotFound(f"no memory {memory_id!r} in namespace {namespace!r}")
            tx.execute(
                f"INSERT INTO memory_feedback (memory_id, {column}, last_at) VALUES (?, 1, ?) "
                # Qualified: a bare name in DO UPDATE is ambiguous to PostgreSQL.
                f"ON CONFLICT (memory_id) DO UPDATE SET {column} = memory_feedback.{column} + 1, "
                "last_at = ?",
                (memory_id, stamp, stamp),
            )
            h, u, w = tx.execute(
                "SELECT helpful, unhelpful, wrong FROM memory_feedback WHERE memory_id = ?",
                (memory_id,),
            ).fetchone()
            value = estimate(int(h), int(u), int(w))
            # utility is read by recall's scoring; the text is never touched.
            self.store.set_utility(tx, memory_id, value)
            audit.append_event(tx, actor=self.actor, action="lifecycle.feedback",
                               namespace=namespace, memory_id=memory_id,
                               content_hash=found, detail={"outcome": outcome})
        return FeedbackResult(id=memory_id, namespace=namespace, outcome=outcome,  # type: ignore[arg-type]
                              helpful=int(h), unhelpful=int(u), wrong=int(w),
                              estimate=round(value, 4))

    # -- maintenance -------------------------------------------------------------------

    def maintain(
        self, namespace: str = "default", *, apply: bool = False, auto_only: bool = False
    ) -> MaintenanceReport:
        """Plan maintenance of a namespace; with ``apply``, do the safe steps and stage
        the judgement calls as review proposals (only the safe steps with ``auto_only``).

        A dry run (the default) writes nothing. Raises MaintenanceBusy if another runner
        is working the namespace.
        """
        namespace = v.validate_namespace(namespace)
        if apply:  # a forget's purge still owed is a safe step of its own (trust/forget.py)
            forget.purge(self.db, self.store.keywords, wait=False)
        return runner.maintain(self.ctx, namespace, apply=apply, auto_only=auto_only)

    def maintenance_status(self, namespace: str | None = None) -> MaintenanceStatus:
        """When maintenance last ran in each namespace, what waits for review, what is live."""
        names: Sequence[str]
        conn = self.db.conn()
        if namespace is not None:
            names = [v.validate_namespace(namespace)]
        else:
            names = self.store.maintained_namespaces(conn)
        rows = []
        for name in names:
            last = conn.execute(
                "SELECT started_at, mode, status FROM maintenance_runs WHERE namespace = ? "
                "ORDER BY started_at DESC LIMIT 1", (name,),
            ).fetchone()
            pending = ReviewQueue.pending_count(conn, name, runner.PROPOSAL_KINDS,
                                                now=clock.format_time(clock.now()))
            archived = self.store.count_status(conn, name, "archived")
            rows.append(NamespaceMaintenance(
                namespace=name, last_run_at=clock.parse_stored(last[0]) if last else None,
                last_run_mode=last[1] if last else None, last_run_status=last[2] if last else None,
                pending_proposals=int(pending), archived=int(archived),
                lease_holder=lease.holder(conn, name),
            ))
        settings = self.settings
        near = self._near_detail()
        consolidation = ("extractive, similarity >= "
                         f"{settings.consolidation_threshold}" if self.recaller.dense_live()
                         else "off: no embedding model (keyword-only store)")
        auto = (f"on: safe band every {settings.auto_maintenance_hours} h"
                if settings.auto_maintenance else "off")
        return MaintenanceStatus(namespaces=rows, scoring=settings.lifecycle_scoring,
                                 near_duplicates=near, consolidation=consolidation,
                                 auto_maintenance=auto)

    def lifecycle_stages(self) -> list[Stage]:
        """The lifecycle parts of recall and writing, for ``status()``."""
        settings = self.settings
        scoring = Stage(
            name="lifecycle", live=settings.lifecycle_scoring,
            detail="utility scoring at query time (importance, forgetting curve, feedback)"
            if settings.lifecycle_scoring else "off: pure relevance (lifecycle_scoring=false)",
        )
        live = self.recaller.dense_live() and settings.near_duplicate_policy != "off"
        return [scoring, Stage(name="near-duplicates", live=live,
                               detail=self._near_detail())]

    def _near_detail(self) -> str:
        settings = self.settings
        if settings.near_duplicate_policy == "off":
            return "off (near_duplicate_policy = off)"
        if not self.recaller.dense_live():
            return "off: no embedding model (keyword-only store)"
        return (f"{settings.near_duplicate_policy} at cosine >= "
                f"{settings.near_duplicate_threshold} (same namespace and kind; not turns)")

    # -- consolidation -----------------------------------------------------------------

    def consolidate(self, namespace: str = "default", *, dry_run: bool = False,
                    limit: int = 20) -> ConsolidationReport:
        """Cluster related memories and write an extractive summary for each cluster;
        the sources are archived, linked from the summary, and stay readable.

        ``dry_run`` returns the summaries it would write and changes nothing.
        """
        namespace = v.validate_namespace(namespace)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise InvalidInput("limit must be a whole number from 1 to 1000")
        report = ConsolidationReport(namespace=namespace, dry_run=dry_run)
        with self.db.read() as conn:
            table = self.vector_table(conn)
            if table is None:
                report.notes.append("consolidation needs the embedding model; none here")
                return report
            clusters = [cons.summarise(self.store, conn, c, self.embedder.encode) for c in
                        cons.find_clusters(self.store, conn, table, namespace,
                                           self.settings.consolidation_threshold, limit=limit)]
            wanted = {m for cl in clusters for m in cl.ids}
            contents = {i: c for i, c in self.store.contents(conn, namespace).items()
                        if i in wanted}
        for cluster in clusters:
            plan = SummaryPlan(source_ids=cluster.ids, similarity=cluster.similarity,
                               tags=cluster.tags,
                               text=cons.render(cluster.pieces, contents, len(cluster.ids)))
            if not dry_run:
                evidence = cons.pieces_evidence(cluster)
                prepared = prepare_summary(self.ctx, namespace, evidence)  # before the lock
                with self.db.write() as tx:
                    plan.summary_id = write_summary(self.ctx, tx, namespace, evidence,
                                                    reason="consolidate", prepared=prepared)
            report.summaries.append(plan)
        return report

    # -- tiers -------------------------------------------------------------------------

    def promote(self, memory_id: str, *, namespace: str = "default") -> RestoreResult:
        """Bring an archived (cold) memory back to the active tier; recall finds it again.
        It is screened again on the way: an archived row must not become active unscreened."""
        def move(tx: Connection, ns: str) -> bool:
            done = tiers.restore(tx, self.store, memory_id, ns, actor=self.actor)
            if done:
                self._rescreen(tx, memory_id, ns)
            return done

        return self._move_tier(memory_id, namespace, move)

    def archive(self, memory_id: str, *, namespace: str = "default") -> RestoreResult:
        """Move an active memory to the cold tier by hand (``restored`` says it moved);
        recall leaves it out unless asked, ``get`` and ``promote`` still reach it."""
        return self._move_tier(memory_id, namespace, lambda tx, ns: tiers.archive(
            tx, self.store, memory_id, ns, actor=self.actor, reason="by hand", closes=False))

    def _move_tier(self, memory_id: str, namespace: str,
                   move: Callable[[Connection, str], bool]) -> RestoreResult:
        namespace = v.validate_namespace(namespace)
        with self.db.write() as tx:
            done = move(tx, namespace)
            found = self.store.kind_status_replacement(tx, memory_id, namespace)
        if found is None:
            raise NotFound(f"no memory {memory_id!r} in namespace {namespace!r}")
        return RestoreResult(id=memory_id, namespace=namespace, restored=done,
                             status=found[1])

    def _rescreen(self, tx: Connection, memory_id: str, namespace: str) -> None:
        """A memory coming back to the active tier passes today's screen again: a secret
        refuses the promotion (rolled back), suspected injection holds it for review."""
        rowid = self.store.rowid_of(tx, memory_id, namespace)
        record = self.store.get_by_rowid(tx, rowid) if rowid is not None else None
        if rowid is None or record is None:
            return
        screening = self.trust.screen_update({"content": record.content,
                                              "metadata": record.metadata,
                                              "tags": record.tags, "source": record.source})
        if screening is not None and screening.quarantine:
            self.trust.record_update(tx, rowid, record, ["status"], screening)

    def links(self, memory_id: str) -> list[dict[str, Any]]:
        """The lifecycle links of a memory: duplicates, merges, summaries and their sources."""
        return [{"source": s, "target": t, "kind": k, "score": sc}
                for s, t, k, sc in tiers.links_of(self.db.conn(), memory_id)]
