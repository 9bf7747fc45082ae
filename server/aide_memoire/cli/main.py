"""``aide-memoire``: store, recall, search, get, forget, status, export, import."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

import click

from .._version import __version__
from ..engine.core import domain
from ..engine.core.errors import NotFound
from ..engine.core.settings import Settings
from ..engine.facade.memory import Memory
from ..logs import configure_logging
from ..mcp.core import RecallOutput, SearchOutput, StoreOutput
from .facts import format_facts
from .fields import field_options, filter_options, given_fields, given_filters
from .namespace import cli_namespace, namespace_option
from .output import (
    EXIT_ERROR,
    EXIT_USAGE,
    emit,
    emit_failure,
    engine_errors,
    fail,
    format_hit,
    format_record,
    format_records,
    plural,
)

F = TypeVar("F", bound=Callable[..., Any])


def as_of_options(fn: F) -> F:
    fn = click.option("--include-superseded", is_flag=True,
                      help="Also show replaced memories (history), each below its replacement.")(fn)
    return click.option("--as-of", default=None,
                        help="Answer from what was valid at this time (ISO 8601).")(fn)


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")(fn)


@contextmanager
def open_memory(ctx: click.Context) -> Iterator[Memory]:
    """Open the store named by --home / AIDE_MEMOIRE_HOME; engine errors exit cleanly."""
    with engine_errors():
        settings = Settings.from_env(home=ctx.obj.get("home"))
        with Memory(settings=settings) as memory:
            memory.actor = "cli"  # named in the audit log
            yield memory


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aide-memoire")
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Data folder of the store (default: $AIDE_MEMOIRE_HOME, else the user data dir).",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="warning",
    show_default=True,
    help="Log level (logs go to stderr).",
)
@click.pass_context
def cli(ctx: click.Context, home: Path | None, log_level: str) -> None:
    """Persistent, local-first memory for AI agents."""
    configure_logging(log_level)
    ctx.ensure_object(dict)
    ctx.obj["home"] = home


def _read_content(text: str) -> str | bytes:
    if text == "-":
        return strip_final_newline(sys.stdin.buffer.read())
    return text


def strip_final_newline(data: bytes) -> bytes:
    """``echo text | aide-memoire store -`` stores "text": the shell's one final newline
    (LF or CRLF) is not part of it; any other whitespace the user sent is kept."""
    if data.endswith(b"\r\n"):
        return data[:-2]
    return data[:-1] if data.endswith(b"\n") else data


@cli.command()
@click.argument("text")
@namespace_option
@field_options({"source": "cli"})
@click.option("--supersedes", default=None,
              help="Id of a memory this one replaces (kept as history, ranked below).")
@json_option
@click.pass_context
def store(
    ctx: click.Context, /, text: str, namespace: str, supersedes: str | None, as_json: bool,
    **options: Any,
) -> None:
    """Store TEXT as a memory ('-' reads it from stdin). Prints its id."""
    with open_memory(ctx) as memory:
        memory_id = memory.store(
            _read_content(text),  # type: ignore[arg-type]
            namespace=namespace, supersedes=supersedes, **given_fields(options),
        )
    emit(StoreOutput(id=memory_id, namespace=namespace), as_json=as_json, text=memory_id)


@cli.command()
@click.argument("query")
@namespace_option
@click.option("--limit", type=int, default=10, show_default=True,
              help=f"How many hits (at most {domain.RESULTS_MAX}).")
@click.option("--kind", "kinds", multiple=True, help="Only these kinds (repeatable).")
@click.option("--tags", default="", help="Only memories with one of these tags (comma-separated).")
@as_of_options
@filter_options
@json_option
@click.pass_context
def recall(
    ctx: click.Context,
    /,
    query: str,
    namespace: str,
    limit: int,
    kinds: tuple[str, ...],
    tags: str,
    as_of: str | None,
    include_superseded: bool,
    as_json: bool,
    **options: Any,
) -> None:
    """Recall the memories most relevant to QUERY, best first."""
    with open_memory(ctx) as memory:
        hits = memory.recall(
            query,
            namespace=namespace,
            limit=limit,
            kinds=list(kinds) or None,
            tags=[t for t in tags.split(",") if t] or None,
            as_of=as_of,
            include_superseded=include_superseded,
            **given_filters(options),
        )
    text = "\n".join(format_hit(i, h) for i, h in enumerate(hits, 1)) or "no memories found"
    emit(RecallOutput(query=query, namespace=namespace, hits=hits), as_json=as_json, text=text)


@cli.command()
@namespace_option
@click.option("--tags", default="", help="Only memories with one of these tags (comma-separated).")
@click.option("--kind", "kinds", multiple=True, help="Only these kinds (repeatable).")
@click.option("--min-importance", type=float, default=None, help="Only at least this important.")
@click.option("--since", default=None, help="Only observed at or after this time (ISO 8601).")
@click.option("--until", default=None, help="Only observed at or before this time (ISO 8601).")
@click.option("--limit", type=int, default=50, show_default=True,
              help=f"How many memories (at most {domain.RESULTS_MAX}).")
@as_of_options
@filter_options
@json_option
@click.pass_context
def search(
    ctx: click.Context,
    /,
    namespace: str,
    tags: str,
    kinds: tuple[str, ...],
    min_importance: float | None,
    since: str | None,
    until: str | None,
    limit: int,
    as_of: str | None,
    include_superseded: bool,
    as_json: bool,
    **options: Any,
) -> None:
    """List memories by filters, newest first."""
    with open_memory(ctx) as memory:
        records = memory.search(
            namespace=namespace,
            tags=[t for t in tags.split(",") if t] or None,
            kinds=list(kinds) or None,
            min_importance=min_importance,
            since=since,
            until=until,
            limit=limit,
            as_of=as_of,
            include_superseded=include_superseded,
            **given_filters(options),
        )
    emit(SearchOutput(namespace=namespace, memories=records), as_json=as_json,
         text=format_records(records))


@cli.command()
@click.argument("memory_id")
@namespace_option
@json_option
@click.pass_context
def get(ctx: click.Context, memory_id: str, namespace: str, as_json: bool) -> None:
    """Show one memory by id."""
    with open_memory(ctx) as memory:
        try:
            record = memory.get_detail(memory_id, namespace=namespace)
        except NotFound as exc:
            fail(str(exc), EXIT_ERROR)
    text = format_record(record)
    if record.superseded_by:
        text += f"\n    superseded by {record.superseded_by}"
    if record.facts:
        text += "\nfacts:\n" + format_facts(record.facts)
    emit(record, as_json=as_json, text=text)


@cli.command()
@click.argument("memory_id", required=False)
@namespace_option
@click.option("--tag", default=None, help="Forget every memory with this tag.")
@click.option("--query", default=None, help="Forget every memory containing all these words.")
@click.option("--dry-run", is_flag=True, help="List what would be forgotten; change nothing.")
@json_option
@click.pass_context
def forget(
    ctx: click.Context,
    memory_id: str | None,
    namespace: str,
    tag: str | None,
    query: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Delete a memory (ID, or all with --tag / matching --query) from the store and indexes."""
    if (memory_id is None) == (tag is None and query is None):
        fail("give either a memory ID or --tag / --query", EXIT_USAGE)
    if memory_id is None or dry_run:
        with open_memory(ctx) as memory:
            report = memory.forget_matching(
                namespace=namespace, tag=tag, query=query, dry_run=dry_run, only_id=memory_id
            )
        verb = "would forget" if dry_run else "forgot"
        emit(report, as_json=as_json,
             text="\n".join([f"{verb} {plural(len(report.ids), 'memory')}", *report.ids]))
        return
    with open_memory(ctx) as memory:
        removed = memory.forget(memory_id, namespace=namespace)
    result = {"id": memory_id, "forgotten": removed}
    if not removed:
        emit_failure(result, as_json=as_json,
                     message=f"no memory {memory_id!r} in namespace {namespace!r}")
    emit(result, as_json=as_json, text=f"forgot {memory_id}")


@cli.command()
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """What the store holds and which recall stages are live.

    With --json, sqlite_driver and sqlite_version still give db_driver and db_engine under
    their former names (sqlite_version as SQLite's bare version), for one more release:
    read db_driver and db_engine."""
    from ..engine.core.projects import directory_from, project_for
    from ..hooks.capture import capture_enabled

    project = project_for(directory_from(os.environ, None))
    with open_memory(ctx) as memory:
        report = memory.status()
        capture_on, capture_why = capture_enabled(memory.settings, project.root)
    lines = [
        f"aide-memoire {report.version}",
        f"store      {report.db_path} ({report.db_bytes} bytes, schema {report.schema_version})",
        f"database   {report.db_engine} ({report.db_driver}), journal {report.journal_mode}",
        f"encryption {report.encryption}",
        f"memories   {report.memories}",
    ]
    lines += [f"  {ns:<30} {n}" for ns, n in report.namespaces.items()]
    lines += [
        f"stage      {s.name:<10} {'live' if s.live else 'off '}  {s.detail}"
        for s in report.stages
    ]
    lines.append(f"project    {project.namespace} ({project.root}); capture {capture_why}")
    used, why = cli_namespace()
    lines.append(f"namespace  {used} (what commands use without --namespace: {why})")
    # The old names, for scripts that read them: the engine was named without "SQLite ".
    renamed = {"sqlite_driver": report.db_driver,
               "sqlite_version": report.db_engine.removeprefix("SQLite ")}
    emit({**report.model_dump(), **renamed, "project": {
        "namespace": project.namespace, "root": str(project.root), "capture": capture_on,
        "capture_detail": capture_why},
        "cli_namespace": {"namespace": used, "why": why}},
        as_json=as_json, text="\n".join(lines))


@cli.command(name="hook")
@click.argument("event", type=click.Choice(
    ["session-start", "user-prompt-submit", "stop", "pre-compact", "session-end"]))
@click.pass_context
def hook_cmd(ctx: click.Context, event: str) -> None:
    """Run a Claude Code hook: reads the hook JSON on stdin, prints context, exits 0
    (failures are logged to <home>/logs/hooks.log; docs/hooks.md)."""
    from .hook import main as hook_main

    hook_main(event, ctx.obj.get("home"))


def _private_file(path: Path) -> IO[str]:
    """Open ``path`` for writing, readable by its owner only (0600, even if it existed):
    an export holds every memory's text, and with --reveal-pii personal data too."""
    fd = os.open(path, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
    if hasattr(os, "fchmod"):  # POSIX; Windows has no such mode bits
        os.fchmod(fd, 0o600)
    return os.fdopen(fd, "w", encoding="utf-8")


@cli.command(name="export")
@click.option("--namespace", "-n", default=None, help="One namespace (default: all).")
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="File to write (default: stdout).",
)
@click.option("--reveal-pii", is_flag=True, help="Keep personal data unmasked in the export.")
@click.option("--with-vectors", is_flag=True,
              help="Include vectors (base64 float32): an import in the same model skips encoding.")
@click.pass_context
def export_cmd(
    ctx: click.Context, namespace: str | None, output: Path | None, reveal_pii: bool,
    with_vectors: bool,
) -> None:
    """Export memories as JSON Lines (personal data masked unless --reveal-pii)."""
    from .ops import progress_lines

    with open_memory(ctx) as memory:
        counts = memory.status().namespaces
        total = sum(counts.values()) if namespace is None else counts.get(namespace, 0)
        lines = progress_lines(
            memory.export_lines(namespace, reveal_pii=reveal_pii, with_vectors=with_vectors),
            total=total + 1, desc="export", as_json=False, size=lambda _: 1,
        )
        with contextlib.ExitStack() as stack:
            fh = sys.stdout if output is None else stack.enter_context(_private_file(output))
            count = -1
            for line in lines:
                fh.write(line + "\n")
                count += 1
    click.echo(f"exported {plural(count, 'memory')}", err=True)


@cli.command(name="import")
@click.argument("source")
@click.option("--project", "project_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="claude-code: this project's transcripts (default: here).")
@click.option("--all", "every", is_flag=True, help="claude-code: every project's transcripts.")
@click.option("--dry-run", is_flag=True, help="claude-code: count what would be added.")
@click.option("--redact-secrets", is_flag=True,
              help="Replace secrets with [redacted:<kind>] instead of leaving their lines out.")
@click.option("--all-or-nothing", is_flag=True,
              help="Write nothing if a line holds a secret (the first is named).")
@json_option
@click.pass_context
def import_cmd(ctx: click.Context, source: str, project_dir: Path | None, every: bool,
               dry_run: bool, redact_secrets: bool, all_or_nothing: bool,
               as_json: bool) -> None:
    """Import a JSON Lines export (memories present are skipped), or with SOURCE
    'claude-code' the Claude Code transcripts in ~/.claude/projects (docs/hooks.md)."""
    from .ops import progress_lines

    if source == "claude-code":
        from .claude_import import run

        run(ctx, open_memory, project_dir, every, dry_run, as_json)
        return
    if project_dir is not None or every or dry_run:
        fail("--project, --all and --dry-run apply to 'import claude-code' only", EXIT_USAGE)
    source_path = Path(source)
    if not source_path.is_file():
        fail(f"no such file: {source}", EXIT_USAGE)

    with open_memory(ctx) as memory, source_path.open(encoding="utf-8") as fh:
        report = memory.import_(progress_lines(
            fh, total=source_path.stat().st_size, desc="import", as_json=as_json, size=len,
            unit="B",
        ), secrets="redact" if redact_secrets else "refuse" if all_or_nothing else "skip")
    redacted = f", redacted {report.redacted} secrets" if report.redacted else ""
    for line in report.refused:  # each left-out line named, never its secret
        click.echo(f"aide-memoire: {line}", err=True)
    if report.refused:
        redacted += f", refused {len(report.refused)} lines holding secrets"
    dropped = "".join(f"\n{line}" for line in report.dropped_links)
    emit(
        report,
        as_json=as_json,
        text=f"read {report.read}, added {report.added}, skipped {report.skipped}{redacted}"
        f"{dropped}",
    )


from .code import register as _register_code  # noqa: E402 - needs cli and open_memory

_register_code(cli, open_memory)

from .serve import serve as _serve  # noqa: E402 - the MCP server command
from .trust import register as _register_trust  # noqa: E402 - review and audit commands
from .ui import ui as _ui  # noqa: E402 - the web page

_register_trust(cli, open_memory)

cli.add_command(_serve)
cli.add_command(_ui)

from .injections import injections as _injections  # noqa: E402 - the prompt hook's log

cli.add_command(_injections)

from .ops import register as _register_ops  # noqa: E402 - snapshot, doctor, reembed

_register_ops(cli, open_memory)

from .lifecycle import register as _register_lifecycle  # noqa: E402 - maintain, feedback...

_register_lifecycle(cli, open_memory)

from .facts import register as _register_facts  # noqa: E402 - facts, related

_register_facts(cli, open_memory)

from .adopt import register as _register_project  # noqa: E402 - project show / adopt

_register_project(cli, open_memory)

from .migrate import register as _register_migrate  # noqa: E402 - migrate-store

_register_migrate(cli)

from .wiki import register as _register_wiki  # noqa: E402 - wiki export / lint

_register_wiki(cli, open_memory)

from .encrypt import register as _register_encrypt  # noqa: E402 - encrypt, decrypt, rekey

_register_encrypt(cli)

from .setup import setup as _setup  # noqa: E402 - MCP clients' config files

cli.add_command(_setup)


def main() -> None:
    cli(prog_name="aide-memoire")


if __name__ == "__main__":
    main()
