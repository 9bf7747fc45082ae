"""Int8 vector blocks on SQLite: what the mirror loads at start-up in one sequential read.

A namespace's vectors (per embedding space) are also kept as blocks of up to
``FULL`` int8 rows (portable/vector_codec.py: rowids, scales, kind codes, sign bits,
vectors), rows of ``vector_blocks`` in the same file: an encrypted store's blocks are
encrypted with it, and they change in the vector write's transaction.

- Writes append one small block per transaction; small blocks at the tail merge as a
  binary counter does (two of about one size become one), so a row is copied about
  log2(FULL) times in all and the tail stays a dozen blocks.
- Deletes are tombstones (``vector_tombstones``): a copy in a block whose ``seq`` is at
  most the tombstone's is gone. A replaced vector is a tombstone and a new copy.
- ``vector_block_state`` says whether the blocks are whole: ``live`` with the
  ``vector_state`` (max_rowid, epoch) they match, ``building`` while :func:`rebuild`
  fills them from vec0 (a store from before the blocks, or one a writer without them
  changed). A write keeps the blocks only while they are in step; otherwise they are
  stale, never used, and rebuilt in the background, in short transactions, rows above
  the build's start coming from the writes themselves.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import vector_codec as codec
from ..protocol import Connection, Database
from ..repositories import BlockReader

__all__ = ["FULL", "SqliteVectorBlocks", "rebuild"]

# The tables: engine/storage/migrations.py, step 14.

FULL = 4096  # rows a block holds: 1.8 MB at 384-d, 245 of them at a million rows
_TAIL_MERGE = 2  # merge the last two small blocks when the older is at most this x newer
_REBUILT_SEQ = -(2**62)  # rebuilt blocks sort below every write's (and every tombstone)
_STALE_BUILD_S = 120.0  # a build with no progress for this long was abandoned


def _blob_row(block: codec.Packed) -> tuple[bytes, ...]:
    return codec.to_blobs(block)


def _killed(dead: tuple[np.ndarray, np.ndarray], seq: int, rowids: np.ndarray
            ) -> np.ndarray | None:
    """Which of a block's ``rowids`` (the block written at ``seq``) the tombstones
    ``dead`` (row, seq; by row) remove; None when none does."""
    rows, seqs = dead
    if not len(rows) or not len(rowids):
        return None
    # A row dies by its latest tombstone if that one is at or above the block's seq.
    at = np.minimum(np.searchsorted(rows, rowids), len(rows) - 1)
    killed = (rows[at] == rowids) & (seqs[at] >= seq)
    return killed if killed.any() else None


class SqliteVectorBlocks:
    """Reads and writes of the block tables (see the module)."""

    # -- state --------------------------------------------------------------------------

    @staticmethod
    def state(conn: Connection, space: str, namespace: str) -> tuple[str, int, int, float] | None:
        """(status, max_rowid, epoch, updated_at) of a namespace's blocks, or None."""
        found = conn.execute(
            "SELECT status, max_rowid, epoch, updated_at FROM vector_block_state "
            "WHERE space = ? AND namespace = ?", (space, namespace)).fetchone()
        return None if found is None else (str(found[0]), int(found[1]), int(found[2]),
                                           float(found[3]))

    @staticmethod
    def _set_sync(tx: Connection, space: str, namespace: str, vector_state: tuple[int, int]
                  ) -> None:
        tx.execute("UPDATE vector_block_state SET max_rowid = ?, epoch = ? "
                   "WHERE space = ? AND namespace = ?", (*vector_state, space, namespace))

    def in_step(self, tx: Connection, space: str, namespace: str,
                vector_state: tuple[int, int] | None) -> bool:
        """Whether the blocks follow the vectors as of ``vector_state`` (before a write)."""
        found = self.state(tx, space, namespace)
        return found is not None and vector_state is not None and \
            (found[1], found[2]) == vector_state

    def usable(self, conn: Connection, space: str, namespace: str,
               vector_state: tuple[int, int]) -> bool:
        found = self.state(conn, space, namespace)
        return found is not None and found[0] == "live" and (found[1], found[2]) == vector_state

    def needs_build(self, conn: Connection, space: str, namespace: str,
                    vector_state: tuple[int, int]) -> bool:
        """Stale or missing, and nobody is building them (or a build was abandoned)."""
        found = self.state(conn, space, namespace)
        if found is None:
            return True
        status, max_rowid, epoch, updated = found
        if status == "building":
            return time.time() - updated > _STALE_BUILD_S or (max_rowid, epoch) != vector_state
        return (max_rowid, epoch) != vector_state

    # -- the write path -----------------------------------------------------------------

    def after_write(self, tx: Connection, space: str, dim: int, namespace: str,
                    before: tuple[int, int] | None, after: tuple[int, int],
                    added: Sequence[tuple[int, Any]], removed: Sequence[int]) -> None:
        """Follow one transaction's vector changes in a namespace: ``removed`` rowids
        (deleted or replaced) become tombstones, ``added`` (rowid, vector) a block."""
        if not self.in_step(tx, space, namespace, before):
            return  # stale (or none): rebuilt before anyone reads them
        top = self._max_seq(tx, space, namespace)
        if removed:
            tx.executemany(
                "INSERT OR IGNORE INTO vector_tombstones (space, namespace, row, seq) "
                "VALUES (?, ?, ?, ?)", [(space, namespace, int(r), top) for r in removed])
        if added:
            rowids = np.array([int(r) for r, _ in added], np.int64)
            kinds = self._kinds(tx, rowids)
            raw = np.stack([np.asarray(v, np.float32) for _, v in added]).reshape(-1, dim)
            self._insert(tx, space, namespace, top + 1, codec.pack(rowids, raw, kinds))
            self._merge_tail(tx, space, namespace, dim)
        self._set_sync(tx, space, namespace, after)

    @staticmethod
    def _kinds(conn: Connection, rowids: np.ndarray) -> np.ndarray:
        kinds: dict[int, int] = {}
        ids = rowids.tolist()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for rowid, kind, turn in conn.execute(
                "SELECT rowid, kind, session_id IS NOT NULL AND position IS NOT NULL "
                f"FROM memories WHERE rowid IN ({','.join('?' * len(chunk))})", chunk):
                kinds[int(rowid)] = codec.kind_code(str(kind), bool(turn))
        return np.array([kinds.get(r, codec.TURN) for r in ids], np.uint8)

    @staticmethod
    def _max_seq(conn: Connection, space: str, namespace: str) -> int:
        found = conn.execute("SELECT max(seq) FROM vector_blocks WHERE space = ? AND "
                             "namespace = ?", (space, namespace)).fetchone()[0]
        return max(0, int(found or 0))

    @staticmethod
    def _insert(tx: Connection, space: str, namespace: str, seq: int,
                block: codec.Packed) -> None:
        tx.execute(
            "INSERT INTO vector_blocks (space, namespace, seq, rows, rowids, scales, kinds, "
            "bits, vectors) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (space, namespace, seq, len(block), *_blob_row(block)))

    def _merge_tail(self, tx: Connection, space: str, namespace: str, dim: int) -> None:
        while True:
            tail = tx.execute(
                "SELECT seq, rows FROM vector_blocks WHERE space = ? AND namespace = ? "
                "AND seq > 0 ORDER BY seq DESC LIMIT 2", (space, namespace)).fetchall()
            if len(tail) < 2:
                return
            (new_seq, new_rows), (old_seq, old_rows) = tail
            if old_rows >= FULL or old_rows > _TAIL_MERGE * new_rows \
                    or old_rows + new_rows > FULL:
                return
            blocks = [self._read_one(tx, space, namespace, s, dim) for s in (old_seq, new_seq)]
            merged = codec.concat([self._alive(tx, space, namespace, s, b)
                                   for s, b in zip((old_seq, new_seq), blocks, strict=True)])
            tx.execute("DELETE FROM vector_blocks WHERE space = ? AND namespace = ? AND "
                       "seq IN (?, ?)", (space, namespace, old_seq, new_seq))
            self._insert(tx, space, namespace, int(new_seq), merged)

    @staticmethod
    def _read_one(conn: Connection, space: str, namespace: str, seq: int, dim: int
                  ) -> codec.Packed:
        blobs = conn.execute(
            "SELECT rowids, scales, kinds, bits, vectors FROM vector_blocks WHERE space = ? "
            "AND namespace = ? AND seq = ?", (space, namespace, seq)).fetchone()
        return codec.unpack(tuple(bytes(b) for b in blobs), dim)  # type: ignore[arg-type]

    @staticmethod
    def _dead(conn: Connection, space: str, namespace: str) -> tuple[np.ndarray, np.ndarray]:
        """(row, seq) of each tombstoned row's latest tombstone, by row."""
        found = conn.execute("SELECT row, max(seq) FROM vector_tombstones WHERE space = ? AND "
                             "namespace = ? GROUP BY row ORDER BY row",
                             (space, namespace)).fetchall()
        rows = np.fromiter((r for r, _ in found), np.int64, len(found))
        seqs = np.fromiter((s for _, s in found), np.int64, len(found))
        return rows, seqs

    def _alive(self, conn: Connection, space: str, namespace: str, seq: int,
               block: codec.Packed, dead: tuple[np.ndarray, np.ndarray] | None = None
               ) -> codec.Packed:
        killed = _killed(dead if dead is not None else self._dead(conn, space, namespace),
                         seq, block.rowids)
        return block if killed is None else block.keep(~killed)

    # -- the mirror's read --------------------------------------------------------------

    def read(self, conn: Connection, space: str, namespace: str, dim: int) -> BlockReader:
        """(rows before tombstones, [(seq, rows)], a reader of one block's live rows):
        the caller sizes its arrays once and reads the blocks one at a time."""
        listing = [(int(s), int(n)) for s, n in conn.execute(
            "SELECT seq, rows FROM vector_blocks WHERE space = ? AND namespace = ? "
            "ORDER BY seq", (space, namespace))]
        dead = self._dead(conn, space, namespace)

        def block(seq: int) -> codec.Packed:
            # Not through a memory map of the file: it saved 0.05 s of CPU at a million
            # rows but put every block's pages in the process's RSS (docs/benchmarks.md,
            # issue 28 round 9).
            return self._alive(conn, space, namespace, seq,
                               self._read_one(conn, space, namespace, seq, dim), dead)

        return sum(n for _, n in listing), listing, block

    def compact(self, tx: Connection, dims: dict[str, int]) -> int:
        """Rewrite every block holding a tombstoned row without it, then drop the
        tombstones (forget's purge: no int8 copy of a forgotten vector stays in the
        file). Namespaces being rebuilt keep theirs (a rebuilt block may still come).
        Returns the blocks rewritten."""
        rewritten = 0
        for space, namespace in tx.execute(
                "SELECT DISTINCT t.space, t.namespace FROM vector_tombstones t JOIN "
                "vector_block_state s ON s.space = t.space AND s.namespace = t.namespace "
                "WHERE s.status = 'live'").fetchall():
            dim = dims.get(str(space))
            if dim is None:
                continue
            dead = self._dead(tx, space, namespace)
            # Only the rowids column is read to find the blocks that hold a dead row (its
            # blob comes first in the record: the vectors' overflow pages stay unread);
            # only those blocks are read whole and rewritten.
            for seq, rowids in tx.execute("SELECT seq, rowids FROM vector_blocks WHERE "
                                          "space = ? AND namespace = ?",
                                          (space, namespace)).fetchall():
                if _killed(dead, int(seq), np.frombuffer(bytes(rowids), np.int64)) is None:
                    continue
                block = self._read_one(tx, space, namespace, seq, dim)
                alive = self._alive(tx, space, namespace, seq, block, dead)
                if len(alive) == len(block):
                    continue
                tx.execute("DELETE FROM vector_blocks WHERE space = ? AND namespace = ? AND "
                           "seq = ?", (space, namespace, seq))
                if len(alive):
                    self._insert(tx, space, namespace, int(seq), alive)
                rewritten += 1
            tx.execute("DELETE FROM vector_tombstones WHERE space = ? AND namespace = ?",
                       (space, namespace))
        return rewritten

    def tombstones(self, conn: Connection, space: str, namespace: str) -> int:
        return int(conn.execute("SELECT count(*) FROM vector_tombstones WHERE space = ? AND "
                                "namespace = ?", (space, namespace)).fetchone()[0])

    # -- rebuilding -----------------------------------------------------------------------

    def begin(self, tx: Connection, space: str, namespace: str,
              vector_state: tuple[int, int], status: str = "building") -> None:
        """Drop the namespace's blocks and start building them (writes follow from now);
        ``live`` for a namespace that has no vectors yet (nothing to build)."""
        tx.execute("DELETE FROM vector_blocks WHERE space = ? AND namespace = ?",
                   (space, namespace))
        tx.execute("DELETE FROM vector_tombstones WHERE space = ? AND namespace = ?",
                   (space, namespace))
        tx.execute(
            "INSERT INTO vector_block_state (space, namespace, status, max_rowid, epoch, "
            "built_to, updated_at) VALUES (?, ?, ?, ?, ?, 0, ?) "
            "ON CONFLICT (space, namespace) DO UPDATE SET status = excluded.status, "
            "max_rowid = excluded.max_rowid, epoch = excluded.epoch, built_to = 0, "
            "updated_at = excluded.updated_at",
            (space, namespace, status, *vector_state, time.time()))

    def add_rebuilt(self, tx: Connection, space: str, namespace: str, number: int,
                    block: codec.Packed, built_to: int) -> bool:
        """Store one rebuilt block; False if the build was taken over or dropped."""
        found = self.state(tx, space, namespace)
        if found is None or found[0] != "building":
            return False
        if len(block):
            self._insert(tx, space, namespace, _REBUILT_SEQ + number, block)
        tx.execute("UPDATE vector_block_state SET built_to = ?, updated_at = ? WHERE "
                   "space = ? AND namespace = ?", (built_to, time.time(), space, namespace))
        return True

    def finish(self, tx: Connection, space: str, namespace: str,
               vector_state: tuple[int, int] | None) -> bool:
        found = self.state(tx, space, namespace)
        if found is None or found[0] != "building" or vector_state is None \
                or (found[1], found[2]) != vector_state:
            return False
        tx.execute("UPDATE vector_block_state SET status = 'live', updated_at = ? WHERE "
                   "space = ? AND namespace = ?", (time.time(), space, namespace))
        return True

    def drop(self, tx: Connection, space: str) -> None:
        """Forget a space's blocks (the space is being dropped)."""
        for table in ("vector_blocks", "vector_tombstones", "vector_block_state"):
            tx.execute(f"DELETE FROM {table} WHERE space = ?", (space,))


def rebuild(db: Database, blocks: SqliteVectorBlocks,
            state_of: Callable[[Connection], tuple[int, int] | None], space_key: str, dim: int,
            table: str, namespace: str) -> bool:
    """Build a namespace's blocks from vec0, a block per short transaction; writes go on
    meanwhile (rows above the start come from them). True when the blocks went live."""
    with db.write() as tx:
        state = state_of(tx)
        if state is None:
            return False
        blocks.begin(tx, space_key, namespace, state)
        top = state[0]
    last, number = 0, 0
    while last < top:
        with db.read() as conn:
            rows = conn.execute(
                f"SELECT m.rowid, v.embedding, m.kind, m.session_id IS NOT NULL AND "
                f"m.position IS NOT NULL FROM memories m JOIN {table} v ON v.rowid = m.rowid "
                "WHERE m.rowid > ? AND m.rowid <= ? AND m.namespace || '' = ? "
                "ORDER BY m.rowid LIMIT ?", (last, top, namespace, FULL)).fetchall()
        if not rows:
            break
        rowids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        raw = np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), dim)
        kinds = np.fromiter((codec.kind_code(str(r[2]), bool(r[3])) for r in rows), np.uint8,
                            len(rows))
        last = int(rowids[-1])
        number += 1
        with db.write() as tx:
            if not blocks.add_rebuilt(tx, space_key, namespace, number,
                                      codec.pack(rowids, raw, kinds), last):
                return False
    with db.write() as tx:
        return blocks.finish(tx, space_key, namespace, state_of(tx))
