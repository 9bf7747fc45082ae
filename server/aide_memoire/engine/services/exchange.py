"""The exchange service: export to JSON Lines and import from it.

An export streams in pages, each page its own short read, so a generator left
unfinished holds no transaction open; an import screens every line as a new write
would be and goes through the write pipeline.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any

from pydantic import ValidationError

from ..core import validate as v
from ..core.errors import InvalidInput, SecretRefused
from ..core.models import ImportReport, MemoryRecord
from ..ops import transfer
from ..runtime.pipeline import SECRETS_POLICIES, SecretsPolicy, check_policy
from ..storage.store import NewRow
from ..trust import audit
from ..trust.screen import refuse_secrets

if TYPE_CHECKING:
    from ..runtime.context import EngineContext

__all__ = ["EXPORT_FORMAT", "EXPORT_VERSION", "ExchangeService"]

EXPORT_FORMAT = "aide-memoire/jsonl"
EXPORT_VERSION = 1
EXPORT_PAGE = 500


def _refuse_identity_secrets(record: MemoryRecord, line: int) -> None:
    """An id and the ids it links to are stored verbatim (no redaction can keep them
    usable), so a secret there refuses the line in every policy."""
    try:
        refuse_secrets({"id": record.id, "reply_to": record.reply_to,
                        "superseded_by": record.superseded_by})
    except SecretRefused as exc:
        raise SecretRefused(
            f"import line {line}: {exc}; ids are kept as they are, so the line is refused "
            "even with redaction: give the memory another id",
            kind=exc.kind, label=exc.label, field=exc.field, offset=exc.offset) from None


class ExchangeService:
    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx
        self.db = ctx.db
        self.store = ctx.store
        self.trust = ctx.trust
        self.settings = ctx.settings
        self.embedder = ctx.embedder
        self.vector_tables = ctx.tables
        self.recaller = ctx.recaller
        self.pipeline = ctx.pipeline

    def export_lines(
        self, namespace: str | None = None, *, reveal_pii: bool = False,
        with_vectors: bool = False,
    ) -> Iterator[str]:
        """JSON Lines: a header line, then one memory per line, oldest first, streamed
        in pages (a memory written while the export runs may or may not be in it).

        Personal data is masked (``[EMAIL]``...) unless ``reveal_pii`` is true.
        ``with_vectors`` adds each memory's vector of the configured model (base64
        float32) so that an import into the same embedding space need not encode again.
        """
        if namespace is not None:
            namespace = v.validate_namespace(namespace)
        with self.db.write() as tx:
            counts = self.store.namespace_counts(tx)
            total = sum(counts.values()) if namespace is None else counts.get(namespace, 0)
            self.trust.record_export(tx, namespace, total, reveal_pii)
        header: dict[str, Any] = {
            "format": EXPORT_FORMAT, "version": EXPORT_VERSION, "namespace": namespace
        }
        with self.db.read() as conn:
            space = transfer.stored_space(conn, self.vector_tables, self.embedder)
        if with_vectors and space is not None:
            header["vectors"] = {"model": space.model, "dim": space.dim, "key": space.key}
        yield json.dumps(header)
        # Page by rowid, each page in its own short read: a generator left unfinished
        # must not hold a read transaction open (a write on this thread would then fail).
        after = 0
        while True:
            with self.db.read() as conn:
                page = self.store.page(conn, namespace, after, EXPORT_PAGE)
                lookup = (transfer.vector_lookup(conn, self.vector_tables, space)
                          if with_vectors and space is not None else None)
                vectors = {record.id: lookup(record.id) for _, record in page} if lookup else {}
            if not page:
                return
            for _, record in page:
                line = (record if reveal_pii else self.trust.masked(record)).model_dump_json()
                vector = vectors.get(record.id)
                yield f'{line[:-1]},"vector":"{vector}"}}' if vector else line
            after = page[-1][0]

    def export(
        self, fp: IO[str], *, namespace: str | None = None, reveal_pii: bool = False,
        with_vectors: bool = False,
    ) -> int:
        """Write the export to a text stream; returns how many memories were written."""
        count = -1
        for line in self.export_lines(
            namespace, reveal_pii=reveal_pii, with_vectors=with_vectors
        ):
            fp.write(line + "\n")
            count += 1
        return count

    def import_(
        self, lines: Iterable[str], *, batch: int = 500, secrets: SecretsPolicy = "skip"
    ) -> ImportReport:
        """Add exported memories as they were; ids already present are skipped.

        Each is validated and screened as a new write would be, whatever its status: a
        line with a secret in any field is left out and named in ``report.refused`` (the
        rest of the file loads); with ``secrets="redact"`` the secret is replaced by
        ``[redacted:<kind>]`` (counted in the report) and the line kept; with
        ``secrets="refuse"`` the first such line stops the import before anything is
        written: the whole file is read, validated and screened first, then written (its
        records held in memory until then), so a refused or invalid line anywhere leaves
        the store as it was. Suspected injection is held for review. Then the rows go
        through the write pipeline (audited, given facts). Added memories get vectors when
        dense recall is live: the export's own when it was made in the same embedding
        space, else encoded here.
        """
        check_policy(secrets, SECRETS_POLICIES)
        read = added = redacted = 0
        refused: list[str] = []
        links: list[tuple[int, str, str, str, str]] = []
        pending: list[tuple[int, MemoryRecord]] = []
        vectors: dict[str, Any] = {}
        space: dict[str, Any] = {}
        # All or nothing means nothing: under "refuse" no batch is written until every
        # line has passed, since each batch is its own transaction.
        deferred: list[tuple[list[tuple[int, MemoryRecord]], dict[str, Any]]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"import line {number} is not JSON: {exc}") from None
            except RecursionError:  # json's parser recurses once per level
                raise InvalidInput(
                    f"import line {number} is nested more than {v.METADATA_MAX_DEPTH} levels "
                    "deep; flatten its metadata"
                ) from None
            if number == 1 and isinstance(data, dict) and "format" in data:
                if data.get("format") != EXPORT_FORMAT or data.get("version") != EXPORT_VERSION:
                    raise InvalidInput(
                        f"import file is {data.get('format')!r} v{data.get('version')}, "
                        f"expected {EXPORT_FORMAT!r} v{EXPORT_VERSION}"
                    )
                space = data.get("vectors") or {}
                continue
            if not isinstance(data, dict):
                raise InvalidInput(
                    f"import line {number} is not a memory: it must be a JSON object with at "
                    f"least 'id' and 'content', not {v.json_type(data)}")
            vector = data.pop("vector", None)
            try:
                record = MemoryRecord.model_validate(data)
            except ValidationError as exc:
                raise InvalidInput(
                    f"import line {number} is not a memory: "
                    f"{v.describe_validation(exc.errors(include_url=False))}") from None
            try:
                v.validate_record(record, max_bytes=self.settings.max_content_bytes)
            except InvalidInput as exc:
                raise type(exc)(f"import line {number}: {exc}") from None
            try:
                # An id can't be redacted: a secret there refuses the line unless lines
                # with secrets are skipped, in which case it is named like any other.
                _refuse_identity_secrets(record, number)
                record, found = self.trust.screen_import(record, number,
                                                         redact=secrets == "redact")
            except SecretRefused as exc:
                if secrets != "skip":
                    raise
                refused.append(str(exc))  # names the line, field, kind and offset, never the value
                continue
            links += [(number, record.id, record.namespace, name, target)
                      for name, target in (("reply_to", record.reply_to),
                                           ("superseded_by", record.superseded_by))
                      if target is not None]
            redacted += sum(len(kinds) for kinds in found.values())
            pending.append((number, record))
            if vector is not None and space.get("dim"):
                vectors[record.id] = transfer.decode_vector(vector, int(space["dim"]), number)
            read += 1
            if len(pending) >= batch:
                deferred.append((pending, vectors))
                if secrets != "refuse":
                    added += self._write_batches(deferred, space.get("key"))
                pending, vectors = [], {}
        if pending:
            deferred.append((pending, vectors))
        added += self._write_batches(deferred, space.get("key"))
        dropped = self._drop_dangling_links(links)
        return ImportReport(read=read + len(refused), added=added, skipped=read - added,
                            redacted=redacted, refused=refused, dropped_links=dropped)

    def _write_batches(
        self, batches: list[tuple[list[tuple[int, MemoryRecord]], dict[str, Any]]],
        given_key: str | None,
    ) -> int:
        """Write the batches in order and empty the list."""
        added = sum(self._import_batch(rows, given, given_key) for rows, given in batches)
        batches.clear()
        return added

    def _drop_dangling_links(self, links: list[tuple[int, str, str, str, str]]) -> list[str]:
        """Links (reply_to, superseded_by) to memories that exist neither in the store nor
        in the file are dropped, each named by its line: a dangling superseded_by would
        hide a memory from recall behind a successor nobody can read. Checked once the
        whole file is in, since a successor comes after what it supersedes."""
        if not links:
            return []
        dropped: list[str] = []
        with self.db.write() as tx:
            for number, memory_id, namespace, name, target in links:
                if self.store.rowid_of(tx, target, namespace) is not None:
                    continue
                rowid = self.store.rowid_of(tx, memory_id, namespace)
                if rowid is None:  # the row was skipped (already present): not ours to edit
                    continue
                record = self.store.get_by_rowid(tx, rowid)
                if record is None or getattr(record, name) != target:
                    continue
                self.store.update_fields(tx, rowid, {name: None})
                audit.append_event(tx, actor=self.trust.actor, action="import.link_dropped",
                                   namespace=namespace, memory_id=memory_id,
                                   detail={"field": name, "line": number})
                dropped.append(f"import line {number}: {name} names memory {target[:40]!r}, "
                               f"which is not in {namespace} nor in the file; link dropped")
        return dropped

    def _import_row(self, number: int, record: MemoryRecord) -> NewRow:
        """The record as a new write, validated field by field like one."""
        try:
            return NewRow(
                namespace=v.validate_namespace(record.namespace),
                kind=v.validate_kind(record.kind),
                content=v.validate_content(record.content,
                                           max_bytes=self.settings.max_content_bytes),
                tags=v.validate_tags(record.tags),
                importance=v.validate_importance(record.importance),
                source=record.source,
                metadata=v.validate_metadata(record.metadata),
                observed_at=record.observed_at,
                session_id=record.session_id, speaker=record.speaker, role=record.role,
                position=record.position, reply_to=record.reply_to, context=record.context,
                status=record.status, id=record.id,
            )
        except InvalidInput as exc:
            raise type(exc)(f"import line {number}: {exc}") from None

    def _import_batch(
        self, batch: list[tuple[int, MemoryRecord]], given: dict[str, Any],
        given_key: str | None,
    ) -> int:
        ids = [r.id for _, r in batch]
        with self.db.read() as conn:  # screen and encode only what is new
            present = self.store.existing_ids(conn, ids)
        new = [(n, r) for n, r in batch if r.id not in present]
        if not new:
            return 0
        rows = [self._import_row(n, r) for n, r in new]
        live = self.recaller.dense_live() and self.embedder.wait()
        space = self.embedder.space if live else None
        reuse = {i: given[r.id] for i, (_, r) in enumerate(new)
                 if space is not None and space.key == given_key and r.id in given}
        # Screened line by line already (secrets refused or redacted, suspects held).
        result = self.pipeline.write(
            rows, action="import", records=[r for _, r in new],
            given_vectors=reuse, skip_hooks=("near_duplicates",),
        )
        return result.added
