"""The SQL of moving a SQLite file in and out of SQLCipher (engine/ops/encrypt.py runs it).

``sqlcipher_export`` copies every table, index, trigger and virtual table (FTS5 and vec0,
whose shadow tables it fills) into an attached database under that database's key; the
header's numbers (application id, schema version) are copied after it. A converted file
is trusted only once opened afresh with its key and found equal, table by table (row
count and content hash of every ordinary table, shadow tables included), to the file it
came from. It sits in storage/, beside the driver, and not in storage/sqlite/: the
operations call it, and only storage may import a backend's package.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from types import ModuleType
from typing import Any

from ..core.errors import StoreError
from .driver import key_opens
from .keys import StoreKey
from .migrations import APPLICATION_ID
from .protocol import Connection

__all__ = ["check_converted", "export_to", "load_vec", "table_digests"]


def load_vec(conn: Connection) -> None:
    """sqlite-vec in the exporting connection: creating the vec0 tables in the new file
    needs their module (without it the export fails, and nothing is replaced)."""
    raw: Any = conn
    with contextlib.suppress(ImportError):
        import sqlite_vec

        raw.enable_load_extension(True)
        sqlite_vec.load(raw)
        raw.enable_load_extension(False)


def table_digests(conn: Connection) -> dict[str, tuple[int, str]]:
    """Each ordinary table's row count and content hash (shadow tables included: they
    hold what FTS5 and vec0 index)."""
    names = [str(r[0]) for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name")]
    out: dict[str, tuple[int, str]] = {}
    for name in names:
        # Both files are SQLite read by one driver: a row's repr is exact (floats by
        # shortest round-trip, blobs byte for byte), and sorting drops the page order.
        rows = sorted(repr(tuple(row)) for row in conn.execute(f'SELECT * FROM "{name}"'))
        digest = hashlib.sha256("\n".join(rows).encode("utf-8", "surrogatepass"))
        out[name] = (len(rows), digest.hexdigest())
    return out


def export_to(conn: Connection, partial: Path, target: StoreKey | None) -> None:
    """Write the open database into the new file ``partial`` under ``target``'s key (or
    none: plain SQLite)."""
    partial.unlink(missing_ok=True)
    os.close(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    key = target.pragma() if target is not None else "''"
    conn.execute(f"ATTACH DATABASE ? AS converted KEY {key}", (str(partial),))
    try:
        conn.execute("SELECT sqlcipher_export('converted')")
        app_id = int(conn.execute("PRAGMA main.application_id").fetchone()[0])
        version = int(conn.execute("PRAGMA main.user_version").fetchone()[0])
        conn.execute(f"PRAGMA converted.application_id = {app_id}")
        conn.execute(f"PRAGMA converted.user_version = {version}")
    finally:
        conn.execute("DETACH DATABASE converted")


def check_converted(module: ModuleType, partial: Path, key: StoreKey | None,
                    expected: dict[str, tuple[int, str]]) -> None:
    """Open the new file afresh with its key and compare it with the old one's digests."""
    conn = module.connect(str(partial), isolation_level=None)
    try:
        if key is not None and not key_opens(conn, key):
            raise StoreError(f"the new file {partial} does not open with its key")
        problems = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(5)")]
        if problems != ["ok"]:
            raise StoreError("the new file failed integrity_check: " + "; ".join(problems))
        if int(conn.execute("PRAGMA application_id").fetchone()[0]) != APPLICATION_ID:
            raise StoreError("the new file lost the store's application id")
        got = table_digests(conn)
    finally:
        conn.close()
    if got != expected:
        differ = sorted(t for t in set(got) | set(expected) if got.get(t) != expected.get(t))
        raise StoreError(f"the new file differs from the old in {', '.join(differ[:5])}")
