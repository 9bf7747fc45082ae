"""``aide-memoire snapshot create|list|rotate|restore``, ``doctor`` and ``reembed``.

Progress bars go to stderr, only when stderr is a terminal and never with ``--json``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import click

from ..engine.core.errors import AideMemoireError, InvalidInput
from ..engine.core.settings import Settings
from ..engine.facade.memory import Memory
from ..engine.ops.models import DoctorReport
from ..engine.ops.snapshot import DEFAULT_KEEP
from .output import EXIT_ERROR, EXIT_USAGE, emit, fail, plural

__all__ = ["progress_bar", "progress_lines", "register"]

T = TypeVar("T")

class _Bar:
    """What a command advances; draws nothing unless a tqdm bar is attached."""

    def __init__(self, bar: Any = None) -> None:
        self._bar = bar

    def update(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def total(self, total: int) -> None:
        if self._bar is not None:
            self._bar.total = total
            self._bar.refresh()


@contextlib.contextmanager
def progress_bar(
    *, total: int | None, desc: str, as_json: bool, unit: str = "it"
) -> Iterator[_Bar]:
    """A bar on stderr when it is a terminal and the output is not --json; else silent."""
    if as_json or not sys.stderr.isatty():
        yield _Bar()
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=desc, unit=unit, unit_scale=True, file=sys.stderr,
              leave=False) as bar:
        yield _Bar(bar)


def progress_lines(
    items: Iterable[T], *, total: int | None, desc: str, as_json: bool,
    size: Callable[[T], int], unit: str = "it",
) -> Iterator[T]:
    """Pass ``items`` through, advancing a bar by ``size(item)`` for each."""
    with progress_bar(total=total, desc=desc, as_json=as_json, unit=unit) as bar:
        for item in items:
            yield item
            bar.update(size(item))


def _doctor_text(report: DoctorReport) -> str:
    lines = [
        f"{'ok ' if c.ok else 'BAD'} {c.name:<15} {c.detail}"
        + ("  (repaired)" if c.repaired else "")
        for c in report.checks
    ]
    lines.append("healthy" if report.healthy else "NOT healthy: see the lines marked BAD "
                 "(run 'aide-memoire doctor --repair' for derived indexes)")
    return "\n".join(lines)


def register(cli: click.Group, open_memory: Callable[[click.Context], Any]) -> None:
    """Add the snapshot group, doctor and reembed to the ``aide-memoire`` group."""

    @cli.group()
    def snapshot() -> None:
        """Consistent copies of the store in <home>/snapshots, rotation and restore."""

    @snapshot.command(name="create")
    @click.option("--keep", type=int, default=None,
                  help="Also rotate: keep only this many newest snapshots.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def snapshot_create(ctx: click.Context, keep: int | None, as_json: bool) -> None:
        """Take a snapshot now (safe while other clients write)."""
        with open_memory(ctx) as memory:
            info = memory.snapshot()
            removed = memory.snapshot_rotate(keep) if keep is not None else []
        emit({"snapshot": info, "rotated": removed}, as_json=as_json,
             text=f"{info.path} ({info.bytes} bytes)")

    @snapshot.command(name="list")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def snapshot_list(ctx: click.Context, as_json: bool) -> None:
        """List snapshots, newest first."""
        with open_memory(ctx) as memory:
            infos = memory.snapshots()
        text = "\n".join(
            f"{i.name}  {i.created_at:%Y-%m-%d %H:%M:%S}  {i.bytes} bytes" for i in infos
        ) or "no snapshots"
        emit({"snapshots": infos}, as_json=as_json, text=text)

    @snapshot.command(name="rotate")
    @click.option("--keep", type=int, default=DEFAULT_KEEP, show_default=True,
                  help="How many newest snapshots to keep.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def snapshot_rotate(ctx: click.Context, keep: int, as_json: bool) -> None:
        """Delete all but the KEEP newest snapshots."""
        with open_memory(ctx) as memory:
            removed = memory.snapshot_rotate(keep)
        emit({"removed": removed}, as_json=as_json,
             text=f"removed {plural(len(removed), 'snapshot')}")

    @snapshot.command(name="restore")
    @click.argument("snapshot_name", metavar="SNAPSHOT")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def snapshot_restore(ctx: click.Context, snapshot_name: str, as_json: bool) -> None:
        """Replace the store by SNAPSHOT (a name from 'snapshot list', or a path).

        The snapshot is verified first; the current store is moved aside to
        memory.db.before-restore-<stamp>. Refused while another process has the store open.
        """
        try:
            settings = Settings.from_env(home=ctx.obj.get("home"))
            report = Memory.restore(snapshot_name, settings=settings, actor="cli")
        except InvalidInput as exc:
            fail(str(exc), EXIT_USAGE)
        except AideMemoireError as exc:
            fail(str(exc), EXIT_ERROR)
        aside = f"; previous store kept at {report.kept_aside}" if report.kept_aside else ""
        emit(report, as_json=as_json,
             text=f"restored {plural(report.memories, 'memory')} from {report.snapshot}{aside}")

    @cli.command()
    @click.option("--repair", is_flag=True,
                  help="Rebuild what is derived from the rows: keyword index, vectors, modes.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def doctor(ctx: click.Context, repair: bool, as_json: bool) -> None:
        """Check the store; exits 0 only when it is healthy."""
        with open_memory(ctx) as memory:
            report = memory.doctor(repair=repair)
        emit(report, as_json=as_json, text=_doctor_text(report))
        if not report.healthy:
            sys.exit(EXIT_ERROR)

    @cli.command()
    @click.option("--namespace", "-n", default=None, help="One namespace (default: all).")
    @click.option("--batch", type=int, default=256, show_default=True,
                  help="Rows encoded and committed per transaction.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.pass_context
    def reembed(ctx: click.Context, namespace: str | None, batch: int, as_json: bool) -> None:
        """Give every row a vector of the configured model (after a model change).

        Resumable: stop it at any time and run it again.
        """
        with open_memory(ctx) as memory, progress_bar(
            total=None, desc="reembed", as_json=as_json, unit="row"
        ) as bar:
            seen = [0]

            def step(done: int, total: int) -> None:
                if done == 0:
                    bar.total(total)
                bar.update(done - seen[0])
                seen[0] = done

            report = memory.reembed(namespace, batch=batch, progress=step)
        text = report.detail or (
            f"encoded {report.encoded} rows in {report.batches} batches "
            f"({report.seconds:.1f} s); {report.remaining} still without a vector"
        )
        emit(report, as_json=as_json, text=text)
