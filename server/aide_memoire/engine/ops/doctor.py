"""The doctor: is this store sound, are its indexes in step with its rows, can it be used here?

Checks: SQLite's ``integrity_check``; the keyword index (FTS5's own check, and one
document per row, no orphans); the vector tables (no vector without its row; every row
has one in the active space); schema version; driver, SQLite and sqlite-vec; the
embedding model; file permissions; the audit chain; the WAL's size.

``repair`` rebuilds only what is derived from the rows, never the rows themselves: the
keyword index (all of it, in one transaction), orphan vectors (deleted), missing vectors
(re-encoded), permissions (reset), an owed purge (finished). A broken audit chain or a
failed ``integrity_check`` cannot be repaired in place: restore a snapshot.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from ..core.space import EmbeddingSpace
from ..recall.embed import Embedder
from ..storage.db import SqliteDatabase
from ..storage.migrations import APPLICATION_ID, SCHEMA_VERSION
from ..storage.repositories import MemoryRows, VectorIndex
from ..trust import audit, forget
from ..trust.anchor import KEY_FILENAME, Anchor
from .models import DoctorCheck, DoctorReport
from .reembed import count_missing
from .snapshot import SNAPSHOT_DIR
from .transfer import stored_space

__all__ = ["Checks", "diagnose", "rebuild_fts"]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _ours(path: Path) -> bool:
    """A plain file or folder itself (not a link, a device, a socket or a pipe)."""
    try:
        kind = path.lstat().st_mode
    except FileNotFoundError:
        return False
    return stat.S_ISREG(kind) or stat.S_ISDIR(kind)


class Checks:
    """Each check as a method returning a DoctorCheck; repairs beside the checks they fix."""

    def __init__(self, db: SqliteDatabase, store: MemoryRows, tables: VectorIndex,
                 embedder: Embedder, home: Path) -> None:
        self.db, self.store, self.tables, self.embedder, self.home = (
            db, store, tables, embedder, home)

    def run(self) -> list[DoctorCheck]:
        return [self.sqlite(), self.schema(), self.integrity(), self.keyword_index(),
                self.vector_orphans(), self.vector_missing(), self.model(), self.files(),
                self.audit_chain(), self.purge(), self.wal()]

    # -- checks ------------------------------------------------------------------------

    def sqlite(self) -> DoctorCheck:
        conn = self.db.conn()
        spaces = self.tables.spaces(conn)
        vec = f"sqlite-vec {self.db.vec_version}" if self.db.vec_version else (
            f"no sqlite-vec ({self.db.vec_error})")
        ok = bool(self.db.vec_version) or not spaces
        detail = f"{self.db.driver.name} SQLite {self.db.driver.sqlite_version}; {vec}"
        if not ok:
            detail += "; this store holds vectors, which cannot be kept in step here"
        return DoctorCheck(name="sqlite", ok=ok, detail=detail)

    def schema(self) -> DoctorCheck:
        app_id = self.db.application_id()
        version = self.db.schema_version()
        ok = app_id == APPLICATION_ID and version == SCHEMA_VERSION
        return DoctorCheck(name="schema", ok=ok,
                           detail=f"version {version} (expected {SCHEMA_VERSION}), "
                           f"application_id {app_id:#x}")

    def integrity(self) -> DoctorCheck:
        rows = self.db.integrity(20)
        return DoctorCheck(name="integrity", ok=not rows, detail="; ".join(rows)
                           + ". The rows themselves are damaged: restore a snapshot"
                           if rows else "ok")

    def keyword_index(self) -> DoctorCheck:
        health = self.db.keyword_health()
        problems = [health.problem] if health.problem else []
        if health.missing:
            problems.append(f"{health.missing} rows have no keyword document")
        if health.orphans:
            problems.append(f"{health.orphans} keyword documents have no row")
        detail = f"{health.rows} rows, {health.docs} documents"
        return DoctorCheck(name="keyword_index", ok=not problems,
                           detail="; ".join([detail, *problems]))

    def vector_orphans(self) -> DoctorCheck:
        conn = self.db.conn()
        spaces = self.tables.spaces(conn)
        if not spaces:
            return DoctorCheck(name="vector_orphans", ok=True, detail="no vector tables")
        if not self.db.vec_version:
            return DoctorCheck(name="vector_orphans", ok=False,
                               detail="sqlite-vec is not loaded: vector tables cannot be read")
        parts, bad = [], 0
        for _, model, dim, table in spaces:
            count = len(self.db.vector_orphans(conn, table))
            bad += count
            parts.append(f"{model} ({dim}-d): {count} orphans")
        return DoctorCheck(name="vector_orphans", ok=bad == 0, detail="; ".join(parts))

    def active_space(self) -> EmbeddingSpace | None:
        """The stored space of the configured model (None if it has no vectors yet)."""
        return stored_space(self.db.conn(), self.tables, self.embedder)

    def vector_missing(self) -> DoctorCheck:
        name = "vector_missing"
        if not self.embedder.enabled or not self.tables.vec_available:
            return DoctorCheck(name=name, ok=True, detail="dense recall off here: not checked")
        # Loaded, not guessed: the space's name depends on the runtime that loads it
        # (the int8 ONNX copy records its vectors as '<model>+int8'), and 'reembed', the
        # advice given below, encodes into exactly that space.
        if not self.embedder.check() or not self.embedder.wait():
            return DoctorCheck(name=name, ok=True, detail="model unavailable: not checked")
        space = self.embedder.space
        assert space is not None
        conn = self.db.conn()
        rows = self.db.memory_count(conn)
        missing = count_missing(conn, self.tables, space, None)
        detail = f"{missing} of {rows} rows lack a vector of {space.model}"
        if missing:
            detail += " (found by keyword only; run 'aide-memoire reembed')"
        return DoctorCheck(name=name, ok=missing == 0, detail=detail)

    def model(self) -> DoctorCheck:
        if not self.embedder.enabled:
            return DoctorCheck(name="model", ok=True,
                               detail=f"keyword-only: {self.embedder.error}")
        ok = self.embedder.check()
        return DoctorCheck(name="model", ok=ok, detail=f"{self.embedder.spec}: "
                           + ("available" if ok else str(self.embedder.error)))

    def _loose_files(self) -> list[tuple[Path, int]]:
        wanted = self._store_paths()
        snaps = self.home / SNAPSHOT_DIR
        if snaps.is_dir():
            wanted.append((snaps, 0o700))
            wanted += [(p, 0o600) for p in snaps.iterdir() if p.is_file()]
        return [(p, m) for p, m in wanted if _ours(p) and _mode(p) & ~m & 0o777]

    def _odd_files(self) -> list[Path]:
        """The store's paths that are a link or not a plain file or folder: the repair
        never changes their mode (a chmod follows a link, and a store path pointed at a
        device such as /dev/null would make that device private to one user)."""
        return [p for p, _ in self._store_paths() if (p.is_symlink() or p.exists())
                and not _ours(p)]

    def _store_paths(self) -> list[tuple[Path, int]]:
        """The home, the store, its side files and the audit key, with the mode each wants."""
        paths = [(self.home, 0o700), (self.db.path, 0o600)]
        paths += [(Path(f"{self.db.path}{s}"), 0o600)
                  for s in ("-wal", "-shm", ".anchor", ".purge-pending")]
        return [*paths, (self.home / KEY_FILENAME, 0o600)]

    def files(self) -> DoctorCheck:
        loose, odd = self._loose_files(), self._odd_files()
        problems = [f"{p.name} {_mode(p):04o} (want {m:04o})" for p, m in loose]
        problems += [f"{p} is a link or not a plain file: doctor leaves its mode alone (point the "
                     "store at a plain file, or set the mode yourself)" for p in odd]
        detail = "home 0700, store and snapshots 0600" if not problems else (
            "too open: " + ", ".join(problems))
        return DoctorCheck(name="files", ok=not problems, detail=detail)

    def audit_chain(self) -> DoctorCheck:
        anchor = Anchor(self.db.path)
        with self.db.read() as conn:
            report = audit.verify(conn, anchor.read(), anchor_expected=anchor.expected(),
                                  fields=True)
        detail = f"{report.events} events, chain intact" if report.intact else (
            f"{report.verdict()}. The log is append-only and cannot be repaired; restore a "
            "snapshot to get a verifiable history")
        return DoctorCheck(name="audit", ok=report.intact, detail=detail)

    def purge(self) -> DoctorCheck:
        """A forget whose purge is still owed: its text may still be in the file."""
        with self.db.read() as conn:
            owed = forget.owed(conn)
        legacy = forget.pending_marker(self.db).exists()
        if owed is None and not legacy:
            return DoctorCheck(name="purge", ok=True, detail="no purge owed")
        since = f" since {owed.since} ({owed.forgets} forget(s))" if owed is not None else ""
        return DoctorCheck(name="purge", ok=False, detail=(
            f"a forget's purge is owed{since}: the forgotten text may still be in the file "
            "or its WAL; run 'aide-memoire doctor --repair' when no other process is reading"))

    def fix_purge(self) -> bool:
        return forget.purge(self.db, self.store.keywords)

    def wal(self) -> DoctorCheck:
        wal = Path(f"{self.db.path}-wal")
        size = wal.stat().st_size if wal.exists() else 0
        return DoctorCheck(name="wal", ok=True, detail=f"{size} bytes")

    # -- repairs -----------------------------------------------------------------------

    def fix_files(self) -> None:
        for path, mode in self._loose_files():
            os.chmod(path, mode)

    def fix_vector_orphans(self) -> int:
        removed = 0
        with self.db.write() as tx:
            for key, _, _, table in self.tables.spaces(tx):
                removed += self.db.delete_vector_orphans(tx, key, table)
        return removed


def rebuild_fts(db: SqliteDatabase, store: MemoryRows, batch: int = 500) -> int:
    """Rebuild the whole keyword index from the rows, in one transaction; returns rows indexed."""
    with db.write() as tx:
        db.clear_keyword_index(tx)
        return store.index_all(tx, batch)


def diagnose(checks: Checks, *, repair: bool, reembed: Any, actor: str) -> DoctorReport:
    """Run every check; with ``repair``, fix what is derived and check again.

    ``reembed`` is a callable giving missing rows their vectors (Memory.reembed).
    """
    results = checks.run()
    if not repair or all(c.ok for c in results):
        return DoctorReport(healthy=all(c.ok for c in results), checks=results)
    failed = {c.name for c in results if not c.ok}
    done: dict[str, Any] = {}
    if "files" in failed:
        checks.fix_files()
        done["files"] = True
    if "keyword_index" in failed:
        done["keyword_index"] = rebuild_fts(checks.db, checks.store)
    if "vector_orphans" in failed and checks.db.vec_version:
        done["vector_orphans"] = checks.fix_vector_orphans()
    if "purge" in failed:
        done["purge"] = checks.fix_purge()
    if "vector_missing" in failed:
        done["vector_missing"] = reembed().encoded
    if done:
        with checks.db.write() as tx:
            audit.append_event(tx, actor=actor, action="doctor.repair", detail=done)
    after = checks.run()
    out = [c.model_copy(update={"repaired": c.name in done and c.ok}) for c in after]
    return DoctorReport(healthy=all(c.ok for c in out), checks=out)
