"""The audit chain's anchor: its head kept outside the database, under a keyed MAC.

The chain inside the file proves that no event in the middle was edited, removed or
moved; it cannot prove that the end was not cut (delete the last events and move
``audit_head`` back) or that the whole log was not emptied. The anchor can: after
every commit that advanced the chain, its head (sequence number and hash) is written to
``<store>.anchor`` beside the database, with an HMAC-SHA256 under a random key kept in
``audit.key`` in the data home (both 0600). ``audit verify`` then requires the log to
reach the anchored event with the anchored hash. The anchor is one fixed-size record
rewritten in place under ``flock`` (a few system calls per audited commit), so two
processes never move it backwards.

What it does not stop: someone who can write the database *and* read the key (the
same user account) can rewrite both. The anchor catches edits made to the database
file alone (a SQL shell, a sync tool, a restored copy, a bug), which is the threat the
append-only log is for. The anchor may lag the log by the commits of a crash window
(it is written just after the commit), never lead it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ...logs import get_logger
from ..storage.protocol import Connection
from ..storage.trust import AuditLog

__all__ = ["Anchor", "AnchorState"]

log = get_logger(__name__)

KEY_FILENAME = "audit.key"
_VERSION = 1


@dataclass(frozen=True)
class AnchorState:
    """What the anchor file says, and whether its MAC holds."""

    seq: int
    hash: str
    valid: bool


_RECORD_BYTES = 256  # one fixed-size record, rewritten in place with a single write


@contextlib.contextmanager
def _locked_fd(path: Path, *, exclusive: bool) -> Iterator[int]:
    """The anchor file open read-write (created 0600), under a lock across processes."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            import fcntl
        except ImportError:  # Windows: no flock; the anchor is then last-writer-wins
            yield fd
            return
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield fd  # closing the descriptor releases the lock
    finally:
        os.close(fd)


class Anchor:
    """The anchor of one store file; thread- and process-safe, monotonic."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".anchor")
        self.key_path = db_path.with_name(KEY_FILENAME)
        self._written = -1  # highest seq this process anchored: skip rereading for others
        self._key_bytes: bytes | None = None

    # -- key ---------------------------------------------------------------------------

    def _key(self) -> bytes:
        if self._key_bytes is None:
            try:
                fd = os.open(self.key_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            except FileExistsError:  # the usual case (or another process made it first)
                pass
            else:
                with os.fdopen(fd, "w") as fh:
                    fh.write(secrets.token_hex(32))
            self._key_bytes = bytes.fromhex(self.key_path.read_text().strip())
        return self._key_bytes

    def _mac(self, seq: int, digest: str) -> str:
        message = f"{_VERSION}:{seq}:{digest}".encode()
        return hmac.new(self._key(), message, hashlib.sha256).hexdigest()

    # -- reading and writing -----------------------------------------------------------

    def _parse(self, raw: bytes) -> AnchorState | None:
        if not raw.strip():
            return None
        try:
            data = json.loads(raw.decode())
            seq, digest, mac = int(data["seq"]), str(data["hash"]), str(data["mac"])
        except (ValueError, KeyError, TypeError):
            return AnchorState(seq=-1, hash="", valid=False)
        return AnchorState(seq=seq, hash=digest,
                           valid=hmac.compare_digest(mac, self._mac(seq, digest)))

    def read(self) -> AnchorState | None:
        """The anchored head, or None when no anchor was written yet."""
        if not self.path.exists():
            return None
        with _locked_fd(self.path, exclusive=False) as fd:
            return self._parse(os.pread(fd, 4 * _RECORD_BYTES, 0))

    def _store(self, fd: int, seq: int, digest: str) -> None:
        body = json.dumps({"version": _VERSION, "seq": seq, "hash": digest,
                           "mac": self._mac(seq, digest)}).encode()
        os.pwrite(fd, body.ljust(_RECORD_BYTES), 0)  # one write of one small block
        os.ftruncate(fd, _RECORD_BYTES)
        self._written = seq

    def advance(self, conn: Connection) -> None:
        """After a commit: anchor the chain's head if it moved past the anchor."""
        head = AuditLog.head(conn)
        if head is None or head[0] <= self._written:
            return
        seq, digest = head
        with _locked_fd(self.path, exclusive=True) as fd:
            current = self._parse(os.pread(fd, 4 * _RECORD_BYTES, 0))
            if current is not None and current.valid and current.seq >= seq:
                self._written = current.seq  # another process anchored further already
                return
            self._store(fd, seq, digest)

    def reset(self, conn: Connection) -> None:
        """Anchor the head as it is now, even if lower (a new or restored store)."""
        seq, digest = AuditLog.head(conn) or (0, "")
        self._key()
        with _locked_fd(self.path, exclusive=True) as fd:
            self._store(fd, seq, digest)
        log.info("audit_anchor_reset", seq=seq, path=str(self.path))

    def expected(self) -> bool:
        """True once this data home has a key: from then on a missing anchor is tampering."""
        return self.key_path.exists()

    def adopt(self, conn: Connection) -> None:
        """A home that never had an anchor (a store older than anchors) is anchored as it is.

        Once the key exists, a missing anchor is not re-adopted: ``verify`` reports it.
        """
        if not self.path.exists() and not self.key_path.exists():
            self.reset(conn)
