"""The operations service: status, snapshots and restore, doctor, re-embedding."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._version import __version__
from ..core import validate as v
from ..core.models import Stage, Status
from ..core.settings import Settings
from ..ops import doctor as ops_doctor
from ..ops import reembed as ops_reembed
from ..ops import snapshot as ops_snapshot
from ..ops.models import DoctorReport, ReembedReport, RestoreReport, SnapshotInfo
from ..runtime.context import sqlite_only
from ..storage.driver import driver_for

if TYPE_CHECKING:
    from ..runtime.context import EngineContext
    from .facts import FactsService
    from .lifecycle import LifecycleService
    from .recall import RecallService

__all__ = ["OperationsService"]


class OperationsService:
    def __init__(
        self, ctx: EngineContext, *, recall: RecallService, facts: FactsService,
        lifecycle: LifecycleService,
    ) -> None:
        self.ctx = ctx
        self.db = ctx.db
        self.store = ctx.store
        self.settings = ctx.settings
        self.embedder = ctx.embedder
        self.vector_tables = ctx.tables
        self.recall = recall
        self.facts = facts
        self.lifecycle = lifecycle

    @property
    def actor(self) -> str:
        return self.ctx.actor

    def status(self) -> Status:
        """What is stored, where, with which database engine, and which stages are live."""
        conn = self.db.conn()
        counts = self.store.namespace_counts(conn)
        info = self.db.describe()
        stages = [
            Stage(name="keyword", live=True, detail=self.ctx.repos.keywords.ranking),
            self.recall.dense_stage(),
            self.recall.rerank_stage(),
            self.facts.facts_stage(),
            *self.lifecycle.lifecycle_stages(),
        ]
        return Status(
            version=__version__,
            home=str(self.settings.home),
            db_path=info.location,
            db_bytes=info.size_bytes,
            schema_version=info.schema_version,
            db_driver=info.driver,
            # A server's engine comes named ("PostgreSQL 16.4"), SQLite's as a bare version.
            db_engine=f"SQLite {info.engine}" if self.db.dialect == "sqlite" else info.engine,
            journal_mode=info.journal,
            encryption=self._encryption(),
            memories=sum(counts.values()),
            namespaces=counts,
            stages=stages,
        )

    def _encryption(self) -> str:
        """Whether the file is encrypted and where its key came from (never the key)."""
        driver: Any = getattr(self.db, "driver", None)  # the SQLite store's; a server's has none
        if not getattr(driver, "encrypted", False):
            return "off"
        return f"SQLCipher {driver.cipher_version}, key from {driver.keys[0].place}"

    def snapshot(self) -> SnapshotInfo:
        """A consistent copy of the store in ``<home>/snapshots``, safe while others write."""
        db = self.ctx.require_sqlite("snapshot")
        return ops_snapshot.create(db, self.settings.home, actor=self.actor)

    def snapshots(self) -> list[SnapshotInfo]:
        """The snapshots of this home, newest first."""
        return ops_snapshot.list_snapshots(self.settings.home)

    def snapshot_rotate(self, keep: int = ops_snapshot.DEFAULT_KEEP) -> list[str]:
        """Delete all but the ``keep`` newest snapshots; returns the names deleted."""
        db = self.ctx.require_sqlite("snapshot rotation")
        return ops_snapshot.rotate(db, self.settings.home, keep=keep, actor=self.actor)

    @staticmethod
    def restore(
        snapshot: str | os.PathLike[str], *, home: str | os.PathLike[str] | None = None,
        settings: Settings | None = None, actor: str = "python",
    ) -> RestoreReport:
        """Replace a home's store by a verified snapshot, moving the live file aside.

        A static method: the store being replaced may be too damaged to open. Refused
        while another process (or an open ``Memory``) has the store open.
        """
        settings = settings or Settings.from_env(home=Path(home) if home is not None else None)
        if settings.database_url is not None:
            raise sqlite_only("restore")
        return ops_snapshot.restore(
            settings.home, snapshot, lambda path: driver_for(path, settings), actor=actor
        )

    def doctor(self, *, repair: bool = False) -> DoctorReport:
        """Check the store, its indexes, model, permissions and audit chain; optionally
        rebuild what is derived from the rows (keyword index, vectors, permissions)."""
        db = self.ctx.require_sqlite("doctor")
        checks = ops_doctor.Checks(
            db, self.store, self.vector_tables, self.embedder, self.settings.home
        )
        return ops_doctor.diagnose(checks, repair=repair, reembed=self.reembed, actor=self.actor)

    def reembed(
        self, namespace: str | None = None, batch: int = 256,
        progress: ops_reembed.Progress | None = None,
    ) -> ReembedReport:
        """Encode a vector for every row lacking one in the active space (after a model
        change, or for rows stored keyword-only); resumable, one transaction per batch."""
        if namespace is not None:
            namespace = v.validate_namespace(namespace)
        return ops_reembed.reembed(
            self.db, self.store, self.vector_tables, self.embedder, namespace=namespace,
            batch=batch, progress=progress, actor=self.actor,
        )
