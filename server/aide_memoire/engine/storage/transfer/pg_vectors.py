"""Loading a vector table into PostgreSQL fast: binary COPY, the indexes built after.

Inserting into an HNSW index one vector at a time costs ~10 ms per vector here (4,000
vectors: 54 s); building the same index after the rows are in takes 4 s. So the copy
reads the definitions of the space's indexes from the catalogue (whatever vectors.py
made), drops them, loads, and makes them again from those definitions, all inside the
copy's transaction. Each namespace's partition is made by the backend's own
``insert_vectors`` (with its row-level security), from that namespace's first vector;
the rest go through one binary COPY (float32 values as they are, no decimal text).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..postgres.connection import PgConnection
from ..postgres.vectors import insert_vectors

__all__ = ["load_vectors"]

_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
_TRAILER = struct.pack(">h", -1)
_EVERY = 1000


def _tuple(rowid: int, namespace: str, blob: bytes) -> bytes:
    values = np.frombuffer(blob, dtype=np.float32)
    # pgvector's binary form: dimensions, a reserved zero, then big-endian float4s.
    vector = struct.pack(">HH", len(values), 0) + values.astype(">f4").tobytes()
    name = namespace.encode()
    return b"".join((struct.pack(">hiq", 3, 8, rowid), struct.pack(">i", len(name)), name,
                     struct.pack(">i", len(vector)), vector))


def _indexes(tx: PgConnection, table: str) -> list[tuple[str, str]]:
    return [(str(n), str(d)) for n, d in tx.execute(
        "SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = to_regclass(?) "
        "AND NOT i.indisprimary", (table,))]


def load_vectors(tx: PgConnection, table: str, firsts: list[tuple[int, str, bytes]],
                 rows: Iterable[tuple[Any, ...]]) -> Iterator[int]:
    """Write ``rows`` (rowid, namespace, float32 bytes) into ``table``; ``firsts`` holds
    one row per namespace (made first, through insert_vectors). Yields rows written."""
    indexes = _indexes(tx, table)
    for name, _ in indexes:
        tx.execute(f'DROP INDEX "{name}"')
    insert_vectors(tx, table, [(r, ns, np.frombuffer(b, dtype=np.float32).tolist())
                               for r, ns, b in firsts])
    made = {r for r, _, _ in firsts}
    done = len(firsts)
    with tx.raw.cursor() as cursor, cursor.copy(
            f'COPY "{table}" (rowid, namespace, embedding) FROM STDIN WITH (FORMAT binary)'
            .encode()) as copy:
        copy.write(_HEADER)
        for rowid, namespace, blob in rows:
            if int(rowid) in made:
                continue
            copy.write(_tuple(int(rowid), str(namespace), bytes(blob)))
            done += 1
            if done % _EVERY == 0:
                yield done
        copy.write(_TRAILER)
    # A partitioned table's index reads back as "ON ONLY" (the parent alone): made here
    # on the whole table, so every partition gets its own, as vectors.py makes them.
    tx.execute("SET LOCAL maintenance_work_mem = '256MB'")
    for _, definition in indexes:
        tx.execute(definition.replace(" ON ONLY ", " ON ", 1))
    yield done
