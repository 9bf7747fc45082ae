"""``aide-memoire migrate-store``: copy the store to PostgreSQL, or a server store back to
a SQLite file, verified table by table (engine/storage/transfer/).

A bar per table on stderr (rows copied of the table's rows) when stderr is a terminal
and ``--quiet`` is not given; the result on stdout (one JSON document with ``--json``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..engine.core.settings import Settings
from .output import EXIT_ERROR, emit, emit_failure, engine_errors, plural

__all__ = ["register"]


class _Bars:
    """One tqdm bar per table, replaced when the copy moves to the next table."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._what = ""

    def __call__(self, what: str, done: int, total: int) -> None:
        from tqdm import tqdm

        if what != self._what:
            self.close()
            self._what = what
            self._bar = tqdm(total=total, desc=what, unit="rows", unit_scale=True,
                             file=sys.stderr, leave=False)
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _text(report: Any) -> str:
    lines = [f"{'ok ' if t.ok else 'BAD'} {t.table:<28} {t.how:<8} "
             f"{plural(t.rows, 'row'):>12}  {t.note}".rstrip() for t in report.tables]
    lines.append(f"{report.source} -> {report.target}: {plural(report.rows, 'row')} in "
                 f"{report.seconds:.1f} s ({report.rows_per_second:.0f} rows/s); audit chain "
                 f"{'verifies' if report.audit_intact else 'BROKEN'} "
                 f"({plural(report.audit_events, 'event')})")
    return "\n".join(lines)


def register(cli: click.Group) -> None:
    @cli.command(name="migrate-store")
    @click.option("--to", "target", required=True, metavar="URL|PATH",
                  help="The empty store to copy into: a postgresql:// URL or a SQLite file.")
    @click.option("--from", "source", default=None, metavar="URL|PATH",
                  help="The store to copy (default: the one the settings select: "
                  "AIDE_MEMOIRE_DATABASE_URL, else the home's SQLite file). Never written.")
    @click.option("--quiet", "-q", is_flag=True, help="No progress bar on stderr.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def migrate_store(ctx: click.Context, target: str, source: str | None, quiet: bool,
                      as_json: bool) -> None:
        """Copy every table of a store into an empty one (SQLite <-> PostgreSQL).

        One transaction on the target: each table's row count and content hash are
        compared before it commits; any difference rolls it back (exit 1, the table named).
        A target holding any row is refused: nothing is ever merged.
        """
        from ..engine.storage.driver import driver_for, load_driver
        from ..engine.storage.transfer import migrate_store as copy_store
        from ..engine.storage.transfer.endpoints import is_url

        bars = _Bars()
        try:
            with engine_errors():
                settings = Settings.from_env(home=ctx.obj.get("home"))
                if source is None:
                    url = settings.database_url
                    source = url.get_secret_value() if url else str(settings.db_path)
                # The source file's driver: SQLCipher with its home's key when encrypted.
                driver = (load_driver(settings.sqlite_driver) if is_url(source) else
                          driver_for(Path(source).expanduser(), settings,
                                     home=Path(source).expanduser().parent))
                report = copy_store(
                    source, target, driver=driver,
                    home=settings.home,
                    progress=(lambda *_: None) if quiet or not sys.stderr.isatty() else bars)
        finally:
            bars.close()
        if not report.ok:
            if not as_json:
                click.echo(_text(report))
            emit_failure(report, as_json=as_json, code=EXIT_ERROR, message=(
                f"the copy does not match the source ({report.problem}); the target's "
                "transaction was rolled back and it holds nothing of it"))
        emit(report, as_json=as_json, text=_text(report))
